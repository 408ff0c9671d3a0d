"""A sender's first person as a statement about them, for notes read away from the conversation: "I have an
exam" -> "Ana has an exam", "we use Terraform" -> "Ana's team uses Terraform", "we love painting together" -> "Ana and
others love painting together" (a "we" that names no work is the sender and others, not a team: ``personal_we``).
"""

from __future__ import annotations

import re

# words between "I" and its verb ("I just moved", "I really love")
ADVERBS = ("also|just|really|still|always|usually|never|often|even|only|sometimes|already|actually|definitely|"
           "mostly|generally|too|now|currently|recently|finally|totally|absolutely|honestly|personally|truly|"
           "seriously|occasionally|rarely|typically|normally|basically|literally|probably|certainly|simply|"
           "especially|particularly|mainly|then|ever|once")  # listed: a word ending in "ly" may be the verb ("I fly", "I reply")
# the one list of irregular past forms the offline rules share (only forms that are never a present: not "put",
# "read"): a past after "I" or "never" tells what happened ("I never got the email"), and a past keeps its form
# after any subject
IRREGULAR_PAST = frozenset(
    """was were been had did said got gotten made went gone knew known took taken saw seen came thought gave given
    told found left felt kept began begun brought heard held ran met paid sat stood lost spent grew grown won
    bought sent built fell led meant understood wrote written flew flown drove driven drew
    drawn ate eaten drank sang swam chose chosen became forgot forgotten sold spoke spoken broke broken""".split()
)
MODALS = frozenset({"can", "could", "will", "would", "shall", "should", "may", "might", "must", "can't", "cannot",
                    "couldn't", "won't", "wouldn't", "shouldn't", "didn't", "mustn't"})
SAME_FORM = MODALS | IRREGULAR_PAST | {"are"}  # a verb whose form is the same after any subject ("Mel and I are")
_THIRD_FORM = {"have": "has", "do": "does", "don't": "doesn't", "haven't": "hasn't", "am": "is", "go": "goes"}
_THEY_FORM = {"am": "are", "was": "were", "wasn't": "weren't"}  # a later "I am" is "they are"
# a word after "I" that is no verb ("Mel and I and the kids", "taller than I am" has its verb)
NO_VERB = {"and", "or", "but", "nor", "so", "to", "at", "in", "on", "with", "for", "from", "as", "than", "the", "a",
           "an", "if", "when", "because", "who", "that", "myself"}
# the sender's first person, singular and plural, its verb read with it when a subject leads one ("I have" -> "Ana
# has", "I travel" -> "Ana travels", "we have" -> "Ana's team has")
_FIRST_PERSON = re.compile(
    r"\b(?:(?P<contracted>I['’]m|I am|I['’]ll|I['’]ve|I['’]d|we['’]re|we are|we['’]ll|we['’]ve|we['’]d)"
    rf"|(?P<subject>I|we)(?P<adv>(?:\s+(?:{ADVERBS}))*)\s+(?P<verb>[a-z][a-z']*)"
    r"|(?P<word>I|my|me|mine|myself|we|our|ours|us|ourselves))\b",
    re.I,
)
# a contracted subject: its form at the first mention ({who}: the sender, {team}: the sender's team), then later
_CONTRACTED = {"i'm": ("{who} is", "they're"), "i am": ("{who} is", "they are"), "i'll": ("{who} will", "they'll"),
               "i've": ("{who} has", "they've"), "i'd": ("{who} would", "they'd"), "we're": ("{team} is", "they're"),
               "we are": ("{team} is", "they are"), "we'll": ("{team} will", "they'll"), "we've": ("{team} has", "they've"),
               "we'd": ("{team} would", "they'd")}
_WORD = {"i": ("{who}", "they"), "my": ("{who}'s", "their"), "me": ("{who}", "them"), "mine": ("{who}'s", "theirs"),
         "myself": ("{who}", "themselves"), "we": ("{team}", "they"), "our": ("{team}'s", "their"),
         "ours": ("{team}'s", "theirs"), "us": ("{team}", "them"), "ourselves": ("{team}", "themselves")}
_PLURAL = {"we", "our", "ours", "us", "ourselves"}
# "we" of a family or friends ("we love painting together"): "Ana and others", its verb as said ("love", "are")
_GROUP_CONTRACTED = {"we're": ("{team} are", "they're"), "we are": ("{team} are", "they are"),
                     "we'll": ("{team} will", "they'll"), "we've": ("{team} have", "they've"),
                     "we'd": ("{team} would", "they'd")}
_GROUP_WORD = {"we": ("{team}", "they"), "our": ("{who}'s", "their"), "ours": ("{who}'s", "theirs"),
               "us": ("{team}", "them"), "ourselves": ("{team}", "themselves")}
# what makes a "we" a team's: the sentence names work ("we moved the release", "we use Terraform"); without it
# "we" is the sender and others -- family, friends ("we're going camping next month")
WORK = re.compile(
    r"\b(?:deploy\w*|releas\w*|ship(?:s|ped|ping)?|merg\w*|repos?|repositor\w*|sprints?|builds?|servic\w*|servers?|"
    r"clusters?|databases?|db|apis?|pipelines?|ci|staging|production|prod|code|codebase|prs?|pull requests?|"
    r"branch\w*|tickets?|customers?|clients?|meetings?|standups?|reviews?|on-?call|incidents?|migrat\w*|features?|"
    r"bugs?|launch\w*|vendors?|contracts?|invoic\w*|budgets?|quarter\w*|roadmaps?|office|offices|projects?|"
    r"teams?|company|companies|products?|stack|infra\w*|terraform|kubernetes|k8s|aws|gcp|azure|cloud|workflows?|"
    r"process|processes|polic(?:y|ies)|offsite|hiring|interviews?|sales|revenue|backlog|jira|slack|github|gitlab|"
    r"tests?|testing|qa|dashboards?|reports?|deadlines?|demos?|freeze|outages?|rollouts?|rollbacks?|versions?|"
    r"docs|documentation|specs?|work|works|worked|working|workday|job|jobs|shifts?|users?|"
    r"[a-z]+[-_]?\d+[a-z0-9-]*)\b", re.I)


def personal_we(text: str) -> bool:
    """Whether the sentence's "we" is the sender and others rather than their team: it names no work."""
    return WORK.search(text) is None


_BESIDE = re.compile(r"\b(?:and|or)\s+$", re.I)


def third_form(verb: str) -> str:
    """A verb's form after "she" or "Ana": "has", "does", "travels", "flies", "watches"; a modal, a past tense or a
    word that is no plain verb as it is."""
    lowered = verb.lower()
    if lowered in _THIRD_FORM:
        return _THIRD_FORM[lowered]
    past = lowered.endswith("ed") and not lowered.endswith("eed")  # "moved", not "need", "proceed"
    if lowered in SAME_FORM or lowered in NO_VERB or past or "'" in lowered or "’" in lowered:
        return verb
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    if lowered.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


def third_person(text: str, who: str, *, named: bool = False, team_named: bool = False, group: bool = False) -> str:
    """Rewrite a sender's first person as a statement about them: the first mention by name ("I", "my" -> "Ana",
    "Ana's"; "we", "our" -> "Ana's team", "Ana's team's"), its verb agreeing ("I have an exam" -> "Ana has an exam"),
    later ones as "they" / "their" ("... with their sister"). ``named`` / ``team_named`` when the text follows a
    mention already made ("Ana prefers" + "flights when I travel": "... when they travel"). ``group``: "we" is the
    sender and others, not a team ("we're going camping" -> "Ana and others are going camping"; ``personal_we``)."""
    mentioned = {"who": named, "team": team_named}
    names = {"who": who, "team": f"{who} and others" if group else f"{who}'s team"}

    def person(m: re.Match) -> str:
        if m.group("contracted"):
            key = re.sub(r"\s+", " ", m.group("contracted").lower().replace("’", "'"))
            whose = "team" if key.startswith("we") else "who"
            forms = _GROUP_CONTRACTED[key] if group and whose == "team" else _CONTRACTED[key]
        elif m.group("verb"):
            whose = "team" if m.group("subject").lower() == "we" else "who"
            adv, verb = m.group("adv") or "", m.group("verb")
            later = _THEY_FORM.get(verb.lower(), verb) if whose == "who" else verb
            now = verb if group and whose == "team" else third_form(verb)  # "Ana and others love"
            forms = (f"{{{whose}}}{adv} {now}", f"they{adv} {later}")
        else:
            word = m.group("word").lower()
            whose = "team" if word in _PLURAL else "who"
            forms = _GROUP_WORD[word] if group and whose == "team" else _WORD[word]
        # "my wife and I", "Bo and me": the sender beside others is named ("Ana's wife and Ana"), never "they"
        first = not mentioned[whose] or (whose == "who" and _BESIDE.search(m.string, 0, m.start()) is not None)
        mentioned[whose] = True
        return re.sub(r"\{(who|team)\}", lambda k: names[k.group(1)], forms[0] if first else forms[1])

    return _FIRST_PERSON.sub(person, text)
