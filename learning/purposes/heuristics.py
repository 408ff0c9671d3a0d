"""Deterministic text heuristics the offline answers are made of (no model, no network).

They are deliberately plain: a stated preference becomes a declarative LONG fact, a dated
situation a SHORT note with a TTL counted from the date it names, anything else NOOP.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from core import words as vocabulary
from core.words import ABBREVIATED_DOT, INITIALISM, INITIALISM_GOES_ON, STOPWORDS
from learning.purposes.person import ADVERBS, NO_VERB, SAME_FORM, personal_we, third_form, third_person

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december"]

# Only declarative statements are ever kept: a request, an instruction, a question or a reaction is
# NOOP however it is worded ("Never mind.", "Please deploy the hotfix today.", "I like this.").
LEAD_WORDS = re.compile(
    r"^(?:\d+[.)]\s*)?(?:(?:yes|yeah|yep|sure|ok|okay|well|actually|also|oh|so|and|but|great|alright|btw|fyi|plus|"
    r"heads up|just so you know|quick note|by the way|one last thing|wow|hey|hi|thanks|thank you)\b[\s,!:-]*)+",
    re.I,
)
TIME_LEAD = re.compile(r"^(?:next|this|last)\s+(?:week|month|weekend|sprint|year)\s*,?\s*|^(?:today|tomorrow)\s*,?\s+", re.I)
DECLARATIVE_SUBJECT = re.compile(
    r"^(?:i|i'm|i am|i've|i'll|we|we're|we are|we've|we'll|my|our|the team|the [a-z0-9-]+ "
    r"(?:service|server|servers|database|db|cluster|pipeline|api|repo|repository|build|deploy|deploys|release|"
    r"office|team|freeze))\b",
    re.I,
)
REQUEST = re.compile(
    r"\b(?:please|pls|kindly|can you|could you|would you|will you|can we|could we|let's|let us|i'd like|"
    r"i would like|i'd prefer|i would prefer|i'd love|i want|i need|we need|we want|i wanna|go ahead|"
    r"instead|help me|make sure|don't forget|remember to|never mind|nevermind)\b",
    re.I,
)
# a request or an instruction riding on a statement: "... next month and need to add her to the booking", "..., so
# cancel my gym membership" -- a bare verb of what is to be done, after the clause, with what it is done to
_TO_DO = (r"(?:cancel|book|rebook|change|add|remove|delete|send|call|check|update|find|get|make|move|set|schedule|"
          r"reschedule|upgrade|downgrade|refund|email|tell|let|give|ping|switch|put|use|keep|hold|drop|skip|ship|deploy|"
          r"merge|fix|review|note|remember|ask|transfer|charge|pay|apply|message|text|contact|notify|cc|forward|assign|"
          r"escalate|route|reach|hand|loop)")
ASK_ON_THE_SIDE = re.compile(
    # "... and need to add her", "... but would like to upgrade", "..., hoping to get an upgrade"
    r"(?:[,;]|\band\b|\bbut\b|\bso\b)\s+(?:i\s+|we\s+)?(?:(?:would|'d|’d)\s+(?:like|love|appreciate|prefer)|"
    r"want(?:ed|s)?|need(?:ed|s)?|hop(?:e|ed|es|ing)|wish(?:ed|es)?|wonder(?:ed|ing)?|have\s+to|require)\b"
    # "..., so cancel my gym membership", "..., so ping Bo": a bare verb of what is to be done, and what to
    r"|(?:[,;:]|\bso\b|\band\b|\bthen\b)\s+(?:(?:so|and|then|just|please)\s+)*" + _TO_DO + r"\s+"
    r"(?:my|the|a|an|our|it|them|me|us|her|him|this|that|all|both|those|these|everything|anything|in|out|"
    r"(?-i:[A-Z]))"
    # "...; send packages home": a clause after a semicolon or a colon that opens on such a verb
    r"|[;:]\s*(?:(?:please|just)\s+)?" + _TO_DO + r"\b",
    re.I,
)
# a sign-off after the statement ("I'm busy today, talk later"): not part of what holds
SIGN_OFF = re.compile(r"\s*[,;:-]+\s*(?:talk|speak|chat|catch up|see you|ttyl|cheers|thanks|thank you)\b[^.!?]*[.!]*\s*$",
                      re.I)
# "Please remember I prefer window seats", "Can you note that we deploy on Fridays?": a statement the sender asks to
# be kept is the statement; what follows is read as if said alone
KEEP_THAT = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:remember|note|keep in mind|make a note|bear in mind)"
    r"\s+(?:that\s+)?(?=(?:i|i'm|i am|i've|we|we're|we are|my|our)\b)",
    re.I,
)
# "I'm trying to book ...", "I'm going to need to change ...", "I just want to cancel ...", "I'm calling because
# ...": what the sender wants of this conversation, said as a statement about themselves -- a request all the same
INTENT = re.compile(
    r"^(?:i'm|i am|we're|we are)\s+(?:just\s+|really\s+|also\s+|now\s+)?(?:going to need|gonna need|trying|looking|"
    r"hoping|calling|writing|reaching out|checking|wondering|contacting|here to|interested in)\b"
    r"|^(?:i|we)\s+(?:just\s+|really\s+|only\s+|also\s+|still\s+)?(?:want|wanted|need|needed|would like|wish|hope)\b",
    re.I,
)
# "I was told I could get a refund today", "We had an outage today": what happened is no situation that holds on
# ("We moved the release to next week" is one: what was done sets what holds)
PAST = re.compile(r"^(?:i|we)\s+(?:(?:just|already|also|really|only)\s+)?(?:was|were|had|did)\b", re.I)
# "Today I'm feeling great", "I'm so excited": how the sender feels is no situation to keep
FEELING = re.compile(r"^(?:i'm|i am|we're|we are)\s+(?:feeling|so|really|super|very|pretty|quite)\b|^(?:i|we)\s+(?:feel|felt)\b",
                     re.I)


def _clause(stops: str) -> str:
    """What a fact states: up to the first of ``stops``, a dot inside a word ("ana@example.com", "node.js"), of a
    title ("Mr. Jones") or of an initialism the sentence goes on after ("10 a.m. on weekdays") kept."""
    return rf"(?:[^{stops}]|\.(?=[^\s{stops}])|(?:{ABBREVIATED_DOT})\s|(?<={INITIALISM})\.(?={INITIALISM_GOES_ON}))+"


CLAUSE = _clause(".!?")  # to the sentence's end
VALUE = _clause(".!?,")  # a stated value: to the sentence's end or a comma
VALUE_TAIL = r"(?:[^.!?,]|\.(?=[^\s.!?,]))*"  # the rest of a stated value, up to the sentence's end or a comma
PREFERENCE = re.compile(
    r"^(?P<who>i|we)\s+(?P<adv>really\s+|strongly\s+|much\s+|usually\s+|always\s+|generally\s+)?"
    r"(?P<verb>prefer|like|love|enjoy|hate|dislike|avoid)\s+(?P<x>" + CLAUSE + ")",
    re.I,
)
# "I don't like long layovers", "We do not enjoy ...": a liking denied is as standing as one stated
NOT_LIKING = re.compile(r"^(?P<who>i|we)\s+(?:really\s+)?(?:don't|don’t|do not)\s+(?:really\s+)?(?P<verb>like|love|enjoy)\s+"
                        r"(?P<x>" + CLAUSE + ")", re.I)
FAN_OF = re.compile(r"^(?P<who>i'm|i am|we're|we are)\s+(?P<neg>not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?fans?\s+of\s+"
                    r"(?P<x>" + CLAUSE + ")", re.I)
# what "we" do as a rule that is the team's ("We never deploy on Fridays"); "we" of a family does other things
# ("We always look forward to our camping trip")
TEAM_PRACTICES = {"deploy", "release", "ship", "merge", "review", "test", "run", "use", "push", "publish", "rotate",
                  "build", "patch", "upgrade", "restart", "freeze", "triage", "pair", "demo", "work", "squash", "rebase",
                  "tag", "version", "document", "estimate", "invoice", "bill", "close", "open", "escalate", "page"}
# a past tense after "never" or "always" tells what happened ("I never got the email"), not what the sender does
_IRREGULAR_PAST = {"got", "went", "made", "had", "did", "was", "were", "saw", "said", "told", "took", "came", "gave",
                   "knew", "found", "felt", "left", "heard", "bought", "brought", "paid", "sent", "spent", "lost", "won",
                   "ate", "drank", "flew", "drove", "wrote", "thought", "kept", "met", "ran", "sat", "stood", "understood",
                   "became", "began", "forgot", "held", "let", "meant", "put", "read", "set", "sold", "spoke"}
# "I'm a nurse", "I'm a gold member": what the sender is -- by a word for a trade or a standing, never "I'm a bit late"
OCCUPATIONS = ("nurse|doctor|physician|surgeon|dentist|pharmacist|teacher|professor|lecturer|student|lawyer|attorney|"
               "accountant|engineer|developer|programmer|designer|architect|scientist|researcher|analyst|consultant|"
               "manager|director|founder|writer|author|journalist|editor|artist|painter|musician|photographer|chef|cook|"
               "baker|pilot|farmer|electrician|plumber|carpenter|mechanic|firefighter|paramedic|therapist|counselor|"
               "counsellor|social worker|veterinarian|vet|librarian|pastor|soldier|veteran|officer|retiree|"
               "freelancer|contractor|entrepreneur|realtor|banker|salesperson|recruiter|intern|volunteer|"
               "stay-at-home (?:mom|dad|parent)|single (?:mom|dad|parent)|mom|dad|parent|grandparent|grandmother|"
               "grandfather")
_TRADE = (r"(?:(?:senior|junior|lead|staff|principal|chief|head|retired|former|full-time|part-time|freelance|registered|"
          r"certified|licensed|professional|high school|college|university|grad|graduate|phd|medical|nursing|law|art|"
          r"music|software|data|web|mobile|product|project|graphic|ux|ui|civil|mechanical|electrical|research|"
          r"first-time|proud|new)\s+)*")
IDENTITY = re.compile(r"^(?P<who>i'm|i am)\s+(?P<x>(?:an?\s+)?" + _TRADE + r"(?:" + OCCUPATIONS + r")s?\b" + VALUE_TAIL
                      + r"|an?\s+(?:gold|silver|platinum|bronze|regular|basic|premium|elite|diamond)\s+member\b"
                      + VALUE_TAIL + ")", re.I)
# "I can't eat gluten", "I don't eat meat", "I don't drink alcohol": what the sender never takes
DONT_EAT = re.compile(r"^i\s+(?P<verb>can't|can’t|cannot|can not|don't|don’t|do not)\s+(?P<what>eat|drink|have)\s+"
                      r"(?P<x>(?:any\s+)?(?:gluten|dairy|meat|pork|beef|fish|seafood|shellfish|nuts|peanuts|eggs|sugar|"
                      r"alcohol|caffeine|coffee|milk|cheese|wheat|soy|spicy food|red meat)\b" + VALUE_TAIL + ")", re.I)
# "I have two kids", "I have a dog named Max": the sender's family and pets ("we have" may be a team's)
FAMILY = re.compile(r"^i\s+(?:also\s+)?(?:have|have got)\s+(?P<x>(?:an?|one|two|three|four|five|six|\d+)\s+"
                    r"(?:(?:young|little|small|grown|grown-up|adult|teenage|older|younger|big|new|adopted|twin)\s+)*"
                    r"(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|grandkids?|grandchildren|"
                    r"grandsons?|granddaughters?|twins|dogs?|cats?|pets?|puppy|puppies|kittens?|horses?|birds?|parrots?)\b"
                    + VALUE_TAIL + ")", re.I)
MY_PREFERENCE = re.compile(
    r"^(?P<who>my|our)\s+(?:preference|favou?rite(?:\s+[a-z ]+?)?|fave(?:\s+[a-z ]+?)?)\s+is\s+(?P<x>" + CLAUSE + ")",
    re.I,
)
MY_FACT = re.compile(
    r"^(?P<who>my|our)\s+(?P<what>user ?id|username|user name|email|time ?zone|pronouns|role|title|team|"
    r"manager|on-call rotation|stack|main language|language|birthday|home airport)\s+(?:is|are)\s+"
    r"(?P<x>" + VALUE + ")",
    re.I,
)
# "I'm allergic to peanuts", "I'm a vegetarian": what the sender can't or won't eat, a standing fact about them
DIET = re.compile(r"^(?P<who>i'm|i am)\s+(?:an?\s+)?(?:(?:severely|very|highly|deathly|mildly|strict|strictly)\s+)?"
                  r"(?P<x>allergic to " + CLAUSE + r"|(?:vegetarian|vegan|pescatarian|gluten[- ]free|lactose[- ]intolerant|"
                  r"diabetic|coeliac|celiac)\b)", re.I)
# "My wife is allergic to peanuts", "My son loves horses", "My husband is a nurse": a standing fact about someone
# close to the sender, stated in the third person already ("Ana's wife is allergic to peanuts"); only a few kinds of
# fact (what they can't eat, like, are by trade, where they live or work, what they are called), never a state of the
# moment ("My wife is upset", "My son is traveling with me")
KIN = (r"(?P<kin>my\s+(?:(?:older|younger|little|big|baby|eldest|oldest|youngest|teenage|grown)\s+)?"
       r"(?:wife|husband|partner|spouse|fianc[eé]e?|boyfriend|girlfriend|sons?|daughters?|kids|children|child|"
       r"mother|mom|mum|father|dad|parents|brothers?|sisters?|grandmother|grandma|grandfather|grandpa|grandparents|"
       r"aunt|uncle|cousin|niece|nephew|mother-in-law|father-in-law|in-laws|boss|roommate|best friend|"
       r"dogs?|cats?|puppy|kitten|pets?))")
KIN_IS = re.compile(r"^" + KIN + r"\s+(?:is|are)\s+(?:(?:severely|very|highly|deathly|mildly|strict|strictly)\s+)?"
                    r"(?P<x>allergic to " + CLAUSE + r"|(?:vegetarian|vegan|pescatarian|gluten[- ]free|"
                    r"lactose[- ]intolerant|diabetic|coeliac|celiac)\b" + VALUE_TAIL + r"|(?:an?\s+)?" + _TRADE
                    + r"(?:" + OCCUPATIONS + r")s?\b" + VALUE_TAIL + r"|(?:named|called)\s+" + VALUE + ")", re.I)
KIN_LIKES = re.compile(r"^" + KIN + r"\s+(?:really\s+|usually\s+|always\s+)?(?P<verb>prefers?|likes?|loves?|enjoys?|"
                       r"hates?|dislikes?)\s+(?P<x>" + CLAUSE + ")", re.I)
KIN_DOES = re.compile(r"^" + KIN + r"\s+(?:(?:can't|can’t|cannot|doesn't|doesn’t|does not|don't|don’t|do not)\s+"
                      r"(?:eat|drink)\s+(?:any\s+)?(?:gluten|dairy|meat|pork|beef|fish|seafood|shellfish|nuts|peanuts|"
                      r"eggs|sugar|alcohol|caffeine|coffee|milk|cheese|wheat|soy|spicy food|red meat)\b|"
                      r"(?:lives?|works?)\s+(?:as|at|for|in|from)\s+)" + VALUE_TAIL, re.I)
_SHARED = re.compile(r"\b(?:we|our|ours|us)\b", re.I)  # "my wife loves our garden": a plural that is not the team's
_MINE = re.compile(r"\b(?:i|me|my|mine|myself)\b", re.I)


# "Painting landscapes is my favorite!", "Family's super important to me": what the sender values, said of the thing
_THING = r"(?P<x>(?!(?:it|this|that|these|those|they|he|she|you|your|which|what|who|everything|nothing)\b)[^,;:!?]{3,80}?)"
_BE = r"\s*(?P<be>\s(?:is|are)|['’]s|['’]re)\s+"
FAVORITE_THING = re.compile(r"^" + _THING + _BE + r"(?P<more>(?:definitely|really|probably|totally|still)\s+)?my\s+"
                            r"(?P<fav>(?:all-time\s+|absolute\s+)?(?:favou?rite|fave)(?:\s+[a-z]+){0,2})\s*[.!]*$", re.I)
VALUED_THING = re.compile(r"^" + _THING + r"(?:" + _BE + r"(?P<how>(?:so|super|really|very|incredibly|extremely)\s+)?"
                          r"(?P<what>important|special|precious|everything)|\s+(?P<means>means?)\s+"
                          r"(?P<much>so much|a lot|the world|everything))\s+to\s+me\s*[.!]*$", re.I)
# "Getting a refund is important to me": what the sender wants done now, not what they value
_WANTED = re.compile(r"(?:getting|booking|rebooking|changing|cancell?ing|refunding|upgrading|receiving|finding|making|"
                     r"fixing|sending|moving|rescheduling|sorting|resolving|hearing|seeing)\b", re.I)
_THIS = re.compile(r"\b(?:this|that|these|those|such)\b", re.I)  # "stuff like this mural": what the conversation shows


def valued_fact(sentence: str, who: str) -> str | None:
    """What the sender says they value, said of the thing rather than of themselves ("Family's super important to
    me" -> "Family is super important to Ana."; "Painting landscapes is my favorite!" -> "Painting landscapes is
    Ana's favorite."); None for a reaction to what the conversation holds ("This is my favorite!", "That means a
    lot to me"), a question, a request or anything else."""
    text = statement(sentence)
    if text is None:
        return None
    m = FAVORITE_THING.match(text) or VALUED_THING.match(text)
    if m is None:
        return None
    x = m.group("x").strip()
    mine = re.match(r"my\s+", x, re.I)
    if mine:  # "My family is important to me": the sender's own, named
        x = x[mine.end():]
    if (not _has_content(x) or HELD_OBJECT.search(x) or _MINE.search(x) or _SHARED.search(x)
            or _THIS.search(x) or _POINTING.search(x) or _WANTED.match(x)):
        return None
    thing, to = (f"{who}'s {x}", "them") if mine else (x, who)
    be = "are" if (m.group("be") or "").strip(" '’").lower() in ("are", "re") else "is"
    if "fav" in m.groupdict():
        return finish(f"{thing} {be} {(m.group('more') or '').lower()}{who}'s {m.group('fav').lower()}")
    if m.group("means"):
        return finish(f"{thing} {m.group('means').lower()} {m.group('much').lower()} to {to}")
    return finish(f"{thing} {be} {(m.group('how') or '').lower()}{m.group('what').lower()} to {to}")


def kin_fact(text: str, who: str) -> str | None:
    """A standing fact about someone close to the sender ("My wife is allergic to peanuts" -> "Ana's wife is
    allergic to peanuts."), the sender's own words made third person; None for anything else."""
    liking = KIN_LIKES.match(text)
    m = liking or KIN_IS.match(text) or KIN_DOES.match(text)
    if m is None:
        return None
    if liking:  # as the sender's own liking: of something the conversation holds, a reaction
        x = liking.group("x")
        if not _has_content(x) or (liking.group("verb").lower().rstrip("s") in AFFECT and HELD_OBJECT.search(x)):
            return None
        fact = liking.group(0)
    else:
        if not _standing(text[m.end("kin"):]):
            return None
        fact = f"{m.group('kin')} {_first_part(text[m.end('kin'):])}"
    rest = fact[m.end("kin"):]  # the sender named again in it would read as "their": the kin's or the sender's?
    if _SHARED.search(rest) or _MINE.search(rest) or NEEDS_THE_CONVERSATION.search(rest):
        return None
    return finish(third_person(fact, who))


WORK_FACT = re.compile(r"^(?P<who>i|we)\s+(?P<verb>work|live|am based|are based)\s+(?P<x>(?:as|at|for|in|on|from)\s+" + CLAUSE + ")", re.I)
TEAM_USES = re.compile(r"^(?P<who>we|our team|the team)\s+(?P<verb>use|uses|deploy|deploys|run|runs|own|owns)\s+(?P<x>" + CLAUSE + ")", re.I)
SYSTEM_FACT = re.compile(
    r"^(?P<x>the [a-z0-9-]+ (?:service|server|servers|database|db|cluster|pipeline|api|repo|repository)\s+"
    r"(?:is|runs|uses|lives|deploys|needs|requires|has)\s+" + CLAUSE + ")",
    re.I,
)
# An object that points at something only the conversation shows is a reaction, not a preference.
DEICTIC = re.compile(r"^(?:it|this|that|these|those|them|you|your|yours|how|what|when|where|seeing|hearing|"
                     r"the idea|the way|so much|a lot|"
                     # "I hate to say it, but ...", "I hate to complain, but ...": a courtesy before what follows
                     r"to (?:hear|see|know|say|admit|complain|ask|bother|interrupt|trouble|tell|break|be))\b", re.I)
# "that time frame", "the same flight": a choice among what the conversation showed, not a standing preference
CONTEXTUAL = re.compile(r"\b(?:that|this|those|these|the same|the other|the first|the second|the cheaper|the earlier)\s+"
                        r"(?:one|ones|option|options|time|timeframe|time frame|flight|flights|range|price|way|thing|idea|"
                        r"day|date|seat|seats)\b", re.I)
# A note is read later, away from the conversation: one that needs it to be understood -- "it", "them", the
# person spoken to ("Ana is going to call you tomorrow", "Ana prefers not to talk about it") -- is not kept.
NEEDS_THE_CONVERSATION = re.compile(r"\b(?:it|them|you|your|yours|yourself)\b(?!['’])", re.I)
# "I love the yellow leaves", "I like all the colours": a liking of something the conversation holds (a definite
# object) is a reaction to it, and so is one of the person spoken to ("we love working with your team"); "I love
# camping", "I prefer the aisle" are standing preferences
AFFECT = {"like", "love", "enjoy", "hate", "dislike"}
HELD_OBJECT = re.compile(r"^(?:all\s+|both\s+)?(?:the|its|his|her|their)\b|\b(?:you|your|yours)\b", re.I)
VERB_3RD = {"prefer": "prefers", "like": "likes", "love": "loves", "enjoy": "enjoys", "hate": "hates",
            "dislike": "dislikes", "avoid": "avoids", "work": "works", "live": "lives", "use": "uses",
            "deploy": "deploys", "run": "runs", "own": "owns"}
SITUATION = re.compile(
    r"\b(vacation|holiday|out of (?:the )?office|ooo|on leave|parental leave|freeze|frozen|"
    r"(?:i'm|i am|we're|we are|be|is|are)\s+away|"
    r"on call|on-call|blocked|embargo|offsite|migration window|code freeze|this week|next week|"
    r"this sprint|today|tomorrow|this weekend|next weekend|this month|next month|"
    rf"(?:next|this|on)\s+(?:{'|'.join(WEEKDAYS)}))\b",
    re.I,
)
# "next Tuesday", "this Friday", "on Monday": a day of the coming week or two ("Mondays" is every Monday: no date)
NAMED_WEEKDAY = re.compile(rf"\b(?P<which>next|this|on)\s+(?P<day>{'|'.join(WEEKDAYS)})\b", re.I)
UNTIL = re.compile(r"\b(?:until|through|thru|till|til|ends?|runs through|by)\b", re.I)
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
MONTH_DAY = re.compile(r"\b(" + "|".join(m[:3] for m in MONTHS) + r")[a-z]*\.?\s+(\d{1,2})\b", re.I)
TEAM_WIDE = re.compile(
    r"\b(team convention|everyone (?:on the team )?should|for the whole team|the whole team|team-wide|"
    r"our process is|the team should|house rule)\b",
    re.I,
)
CORRECTION = re.compile(
    r"\b(next time|instead of|instead,|you should have|should've|don't forget|do not forget|please remember|"
    r"wrong order|before you|make sure (?:to|you)|you skipped|you forgot)\b",
    re.I,
)
# The negative-capture bans: no environment failures, no "tool X doesn't work", no transient errors.
NEGATIVE = re.compile(
    r"\b(doesn't work|does not work|is broken|timed? ?out|timeout|transient|flaky|rate limit|error|"
    r"crashed|500|503|unavailable|down again)\b",
    re.I,
)


def words(text: str) -> set[str]:
    """The text's words that are not stopwords (any length): what two texts are compared on."""
    return {w for w in vocabulary.words(text) if w not in STOPWORDS}


def overlap(a: str | set[str], b: str) -> float:
    """Jaccard of the two texts' words (``a`` may be given as its ``words`` already: one text against many)."""
    wa, wb = (a if isinstance(a, set) else words(a)), words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


# "I always pick the aisle seat", "We usually just deploy on Thursdays": what the sender does as a rule, in the present
HABIT = re.compile(r"^(?P<who>i|we)\s+(?P<adv>always|usually|normally|typically|generally|never|rarely|often)"
                   rf"(?P<more>(?:\s+(?:{ADVERBS}))*)\s+(?P<verb>[a-z]+)\s+(?P<x>" + CLAUSE + ")", re.I)
IDENTIFIER = re.compile(r"[^\s']*[_\d]")  # a first word with an underscore or a digit: a handle, an id
LEAD_IN = re.compile(r"^(?:heads up|fyi|note|btw|just so you know|quick note)\s*[:,!-]*\s*", re.I)
TRAILING_PLEASE = re.compile(r"[,\s]+please[.!\s]*$", re.I)


def finish(text: str) -> str:
    text = TRAILING_PLEASE.sub("", LEAD_IN.sub("", text.strip()))
    text = text.strip().rstrip(".!,;:") + "."
    if IDENTIFIER.match(text):  # "mia_li_3668 prefers ...": a handle is written as it is
        return text
    return text[0].upper() + text[1:]


def statement(sentence: str) -> str | None:
    """The sentence without its lead-in words and courtesies when it states something; None for a question, a
    request or an instruction."""
    text = LEAD_WORDS.sub("", sentence.strip()).strip()
    kept = KEEP_THAT.sub("", text)
    if kept != text:  # "please remember I prefer ...": the statement, as a statement
        text = kept.rstrip().rstrip("?").rstrip() + "."
    text = SIGN_OFF.sub(".", TRAILING_PLEASE.sub("", text))  # a courtesy "..., please.", a "..., talk later."
    if not text or text.rstrip().endswith("?") or REQUEST.search(text) or ASK_ON_THE_SIDE.search(text):
        return None
    return text


def declarative(sentence: str) -> str | None:
    """``statement``'s text when it has a subject (the sender, their team, a system); None for a question, a
    request, an instruction or a bare reaction."""
    text = statement(sentence)
    if text is None:
        return None
    body = TIME_LEAD.sub("", text)
    return text if DECLARATIVE_SUBJECT.match(body) and not INTENT.match(body) else None


def _is_team(who_word: str) -> bool:
    return who_word.lower() in ("we", "our", "we're", "we are", "our team", "the team")


def _subject(who_word: str, who: str, group: bool = False) -> str:
    if not _is_team(who_word):
        return who
    return f"{who} and others" if group else f"{who}'s team"


def _verb(verb: str, who_word: str, group: bool) -> str:
    """The verb after the note's subject: as said after "Ana and others" ("love"), else its third form ("loves")."""
    return verb if group and _is_team(who_word) else VERB_3RD.get(verb, third_form(verb))


def _after_subject(x: str, who_word: str, who: str, group: bool = False) -> str:
    """What follows a note's subject, in the third person, its mentions of the subject already made ("Ana prefers"
    + "flights when I travel with my kids": "flights when they travel with their kids")."""
    team = _is_team(who_word)
    return third_person(x.strip(), who, named=not team, team_named=team, group=group)


def _possessive(who_word: str, who: str, group: bool = False) -> str:
    return "the team's" if who_word.lower() == "our" and not group else f"{who}'s"


def _has_content(x: str) -> bool:
    return (bool(vocabulary.content_words(x, identifiers=False)) and not DEICTIC.match(x.strip())
            and not CONTEXTUAL.search(x) and not NEEDS_THE_CONVERSATION.search(x))


def _present(verb: str) -> bool:
    """A verb in its plain present form ("pick", "travel"), not a past ("got", "moved"), a modal or no verb."""
    lowered = verb.lower()
    past = lowered.endswith("ed") and not lowered.endswith("eed")
    return not (past or lowered in _IRREGULAR_PAST or lowered in SAME_FORM or lowered in NO_VERB)


# the conversation's own place ("a manager here", "I'll be there tomorrow"), and what it holds ("avoid that")
_HERE = r"\b(?:here|there)\b"
HERE_OR_THERE = re.compile(_HERE, re.I)
_POINTING = re.compile(_HERE + r"|\b(?:that|this|these|those)\s*$", re.I)
# what the sender is doing now ("one child traveling with me"), not what they have or are
_UNDER_WAY = re.compile(r"\b(?:with me|right now|at the moment|today|tonight|this time|travell?ing|flying|coming|going|"
                        r"joining|staying|visiting)\b", re.I)


def _standing(x: str) -> bool:
    """What follows a standing fact's verb holds without the conversation: no "it", "you", "here", "that"."""
    part = _first_part(x)
    return not (NEEDS_THE_CONVERSATION.search(part) or _POINTING.search(part) or _UNDER_WAY.search(part))


def _aside(x: str, text: str) -> bool:
    """A habit that is a complaint ("I always get charged twice!"), points at the conversation ("I usually try to
    avoid that") or shares a plural with the listener ("I always look forward to our chats")."""
    return (text.rstrip().endswith("!") or bool(_POINTING.search(x))
            or _SHARED.search(x) is not None)


# where a stated fact ends and what the sender adds about it begins ("I have two kids and they love the beach")
_ADDED = re.compile(r"\s+(?:and|but|so|because|though|although|which|who|while)\b.*$", re.I | re.S)


def _first_part(x: str) -> str:
    return _ADDED.sub("", x.strip())


def _same_name(value: str, who: str) -> bool:
    return value.strip().strip("'\"`").casefold() == who.strip().casefold()


def preference_fact(sentence: str, who: str) -> str | None:
    """A stated preference or standing fact about a person, a team or a system, as a declarative
    note ("Ana prefers ..."), or None: only what the sentence itself states."""
    text = declarative(sentence)
    if text is None:
        return None if NEGATIVE.search(sentence) else valued_fact(sentence, who)
    if NEGATIVE.search(text):
        return None
    text = TIME_LEAD.sub("", text)
    group = personal_we(text)
    m = PREFERENCE.match(text)
    if m and _has_content(m.group("x")) and not (m.group("verb").lower() in AFFECT and HELD_OBJECT.search(m.group("x"))):
        adverb = (m.group("adv") or "").strip().lower()
        verb = _verb(m.group("verb").lower(), m.group("who"), group)
        lead = f"{adverb} {verb}" if adverb else verb
        return finish(f"{_subject(m.group('who'), who, group)} {lead} "
                      f"{_after_subject(m.group('x'), m.group('who'), who, group)}")
    m = NOT_LIKING.match(text)
    if m and _has_content(m.group("x")) and not HELD_OBJECT.search(m.group("x")):
        denied = "don't" if group and _is_team(m.group("who")) else "doesn't"
        return finish(f"{_subject(m.group('who'), who, group)} {denied} {m.group('verb').lower()} "
                      f"{_after_subject(m.group('x'), m.group('who'), who, group)}")
    m = FAN_OF.match(text)
    if m and _has_content(m.group("x")):
        plural = group and _is_team(m.group("who"))
        liking = ("are not fans of" if plural else "is not a fan of") if m.group("neg") else ("like" if plural else "likes")
        return finish(f"{_subject(m.group('who'), who, group)} {liking} "
                      f"{_after_subject(m.group('x'), m.group('who'), who, group)}")
    m = HABIT.match(text)
    if (m and _present(m.group("verb")) and _has_content(m.group("x")) and not _aside(m.group("x"), text)
            and (m.group("who").lower() == "i" or m.group("verb").lower() in TEAM_PRACTICES)):
        return finish(f"{_subject(m.group('who'), who)} {m.group('adv').lower()}{m.group('more')} {third_form(m.group('verb'))} "
                      f"{_after_subject(m.group('x'), m.group('who'), who)}")
    m = MY_FACT.match(text)
    if m:
        value = re.split(r"\s+(?:and|but)\s+", m.group("x").strip())[0]
        if _same_name(value, who):  # "my user ID is mia_li_3668" from mia_li_3668: it says who the sender is
            return None
        return finish(f"{_possessive(m.group('who'), who, group)} {m.group('what')} is {value}")
    m = MY_PREFERENCE.match(text)
    if m and _has_content(m.group("x")):
        return finish(third_person(m.group(0), who))
    m = DIET.match(text)
    if m and not NEEDS_THE_CONVERSATION.search(m.group("x")):
        return finish(f"{who} is {m.group('x').strip()}")
    m = DONT_EAT.match(text)
    if m and _standing(m.group("x")):
        cannot = not m.group("verb").lower().startswith(("don", "do "))
        if cannot or m.group("what").lower() != "have":  # "I don't have any nuts with me" is what they carry now
            verb = "can't" if cannot else "doesn't"
            return finish(f"{who} {verb} {m.group('what').lower()} {_after_subject(_first_part(m.group('x')), 'i', who)}")
    for pattern, verb in ((IDENTITY, "is"), (FAMILY, "has")):
        m = pattern.match(text)
        if m and _standing(m.group("x")):
            return finish(f"{who} {verb} {_after_subject(_first_part(m.group('x')), 'i', who)}")
    for pattern in (WORK_FACT, TEAM_USES):
        m = pattern.match(text)
        if m and _has_content(m.group("x")):
            verb = m.group("verb").lower()
            if not (group and _is_team(m.group("who"))):  # "Ana and others live in Lyon", "Ana's team uses Terraform"
                verb = {"am based": "is based", "are based": "is based"}.get(verb, VERB_3RD.get(verb, verb))
            return finish(f"{_subject(m.group('who'), who, group)} {verb} "
                          f"{_after_subject(m.group('x'), m.group('who'), who, group)}")
    m = SYSTEM_FACT.match(text)
    if m:
        return finish(text)
    return kin_fact(text, who) or valued_fact(text, who)


def situation_note(sentence: str, who: str, today: date) -> tuple[str, int] | None:
    """A dated situation as (declarative note, ttl_days), or None."""
    text = declarative(sentence)
    if (text is None or not (SITUATION.search(text) or _named_date(text, today)) or NEGATIVE.search(text)
            or FEELING.match(TIME_LEAD.sub("", text)) or NEEDS_THE_CONVERSATION.search(text) or CONTEXTUAL.search(text)
            or _happened(TIME_LEAD.sub("", text)) or HERE_OR_THERE.search(text)):
        return None
    sentence = text
    end = _named_date(sentence, today)
    ttl = _ttl_days(sentence, today, end)
    note = third_person(sentence, who, group=personal_we(sentence)).rstrip(".!")
    if end is None:
        note = f"{note} (as of {today.isoformat()})"
    elif not ISO_DATE.search(sentence):
        note = f"{note} (ends {end.isoformat()})"
    return finish(note), ttl


def _happened(text: str) -> bool:
    """What the sender did or was ("I was told ...", "I went there on Monday"); a past that sets what holds ("We
    moved the release to next week") is not this."""
    if PAST.match(text):
        return True
    m = re.match(rf"^(?:i|we)(?:\s+(?:{ADVERBS}))*\s+([a-z]+)\b", text, re.I)
    return m is not None and m.group(1).lower() in _IRREGULAR_PAST


def _named_date(sentence: str, today: date) -> date | None:
    m = ISO_DATE.search(sentence)
    if m:
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
    m = MONTH_DAY.search(sentence)
    if m and UNTIL.search(sentence):
        month = [x[:3] for x in MONTHS].index(m.group(1).lower()[:3]) + 1
        try:
            found = date(today.year, month, int(m.group(2)))
        except ValueError:
            return None
        return found if found >= today else found.replace(year=today.year + 1)
    lowered = sentence.lower()
    if UNTIL.search(sentence):
        for i, day in enumerate(WEEKDAYS):
            if re.search(rf"\b{day}\b", lowered):
                ahead = (i - today.weekday()) % 7 or 7
                return today + timedelta(days=ahead)
    return None


def _ttl_days(sentence: str, today: date, end: date | None) -> int:
    if end is not None:
        return max(1, min(90, (end - today).days + 1))
    lowered = sentence.lower()
    m = NAMED_WEEKDAY.search(sentence)
    if m:  # to that day, and for "next Tuesday" to the one after too: said on a Thursday it may mean either
        ahead = (WEEKDAYS.index(m.group("day").lower()) - today.weekday()) % 7 or 7
        return ahead + (7 if m.group("which").lower() == "next" else 0) + 1
    for word, days in (("today", 1), ("tomorrow", 2), ("this weekend", 3), ("next weekend", 10), ("this week", 7),
                       ("next week", 14), ("sprint", 14), ("this month", 31), ("next month", 62)):
        if word in lowered:
            return days
    return 7


def team_note(sentence: str, who: str) -> str | None:
    if sentence.rstrip().endswith("?") or not TEAM_WIDE.search(sentence) or REQUEST.search(sentence):
        return None
    return finish(f"{who} described a team-wide practice: {third_person(sentence, who)}")


def correction(sentence: str) -> bool:
    return bool(CORRECTION.search(sentence)) and not NEGATIVE.search(sentence)


