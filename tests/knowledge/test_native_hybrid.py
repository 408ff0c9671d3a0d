"""Native knowledge search ranks pages by meaning and by their words and fuses the two (``core.hybrid``),
with the packaged sentence model: pages written through ``save_page``, found through the searcher seam."""

from __future__ import annotations

import pytest

from core.providers.embeddings import get_embedder, reset_embedder
from crewlet.config import schema
from knowledge.models import Page
from knowledge.pages import save_page
from knowledge.searcher import search

pytestmark = pytest.mark.real_model

LOCAL = schema.Providers(llm={"offline": schema.ProviderSpec(kind="offline")},
                         embeddings=schema.EmbeddingSpec(kind="local"))
PAGES = [
    ("Refund policy", "Refunds over 500 euros need a lead's approval; answer within two days."),
    ("Duplicate charges", "When a customer is charged twice, refund the duplicate at once."),
    ("Deploy runbook", "Ship with a canary release, watch error rates, roll back fast."),
    ("Code style", "Prefer small functions and clear names."),
    ("On-call handbook", "Who to page when the pager fires at night."),
]


@pytest.fixture
def local_native(serve_native):
    serve_native(scope=["ENG", "OPS"], providers=LOCAL)
    reset_embedder()
    get_embedder().load()
    yield
    reset_embedder()


def titles(seat, query, limit):
    return [p.title for p in search(seat, query, limit).pages]


def write_pages(container="ENG"):
    for title, body in PAGES:
        save_page(container_key=container, title=title, body=body)


def test_a_page_sharing_only_a_rare_word_with_the_query_is_found(local_native, seat):
    write_pages()
    save_page(container_key="ENG", title="Partner contacts", body="Mirela at Vantoro handles their invoices.")
    assert "Partner contacts" in titles(seat, "Vantoro refund", 3)


def test_a_page_sharing_no_word_with_the_query_is_found_by_meaning(local_native, seat):
    write_pages()
    save_page(container_key="ENG", title="Vehicle trouble", body="The automobile engine is dead; it makes a clicking noise.")
    result = search(seat, "my car won't start", 1)
    assert result.served_mode == "hybrid" and [p.title for p in result.pages] == ["Vehicle trouble"]


def test_a_page_without_a_vector_of_the_querys_model_is_still_found_by_its_words(local_native, seat):
    write_pages()
    old = save_page(container_key="ENG", title="Partner contacts", body="Mirela at Vantoro handles their invoices.")
    Page.objects.filter(pk=old.pk).update(embedding_model="an-older-model")
    assert "Partner contacts" in titles(seat, "Vantoro", 3)


def test_pages_outside_the_readable_containers_are_never_found(local_native, seat):
    write_pages()
    save_page(container_key="PLAT", title="Partner contacts", body="Mirela at Vantoro handles their invoices.")
    assert "Partner contacts" not in titles(seat, "Vantoro invoices", 10)


def test_an_edited_page_is_found_by_its_new_words(local_native, seat):
    write_pages()
    page = save_page(container_key="ENG", title="Ticket notes", body="Please check ticket QZX-4471.")
    Page.objects.filter(pk=page.pk).update(body="Closed as a duplicate of QZX-9000.")
    assert titles(seat, "QZX-9000", 1) == ["Ticket notes"]
    Page.objects.filter(pk=page.pk).delete()
    assert "Ticket notes" not in titles(seat, "QZX-9000", 5)
