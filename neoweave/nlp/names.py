"""Entity names: normalised keys, type groups, and the variants a title or an alias can take.

Keys decide identity before resolution runs: two surface forms with the same key and a compatible type
group are one entity. The rules are deliberately conservative (case, punctuation, possessives, plurals
of common nouns); everything fuzzier (acronyms, titles like "King", embedding similarity) is a recorded,
undoable merge in `neoweave/enrich/resolution.py`.
"""

from __future__ import annotations

import re
import unicodedata

# spaCy / LLM entity types -> the coarse group that decides identity ("Paris" the city and "Paris" the
# person are different entities; ORG vs PRODUCT tags of one name flip between sentences and are not).
TYPE_GROUPS: dict[str, str] = {
    "person": "person", "per": "person",
    "gpe": "location", "loc": "location", "location": "location", "fac": "location", "facility": "location",
    "org": "organization", "organization": "organization", "norp": "organization",
    "event": "event",
    "work_of_art": "work", "work": "work", "product": "work", "law": "work", "language": "work",
    "date": "date", "time": "date",
    "code": "code",
    "concept": "concept",
    "name": "name",  # a proper-noun phrase the NER model did not type (the small model misses many)
}
DEFAULT_TYPES: tuple[str, ...] = ("person", "organization", "location", "event", "work", "concept", "date",
                                  "product", "code")
# Type groups that may name the same thing (spaCy tags one band ORG here and WORK_OF_ART there).
COMPATIBLE: frozenset[frozenset[str]] = frozenset({
    frozenset({"organization", "work"}), frozenset({"organization", "location"}),
    frozenset({"work", "event"}), frozenset({"concept", "work"}), frozenset({"concept", "organization"}),
    frozenset({"concept", "code"}),
    *(frozenset({"name", group}) for group in ("person", "location", "organization", "work", "event", "code")),
})
_POSSESSIVE = re.compile("(?:'s|\u2019s|'|\u2019)(?=\\s|$)")
_PUNCT = re.compile(r"[^\w\s.+#/-]")
_SPACES = re.compile(r"\s+")
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_LEADING_NUMBER = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?\s+)")
_TITLE_SEPARATOR = re.compile("\\s+(?:\u2014|\u2013|-{1,2}|:)\\s+")  # em dash, en dash, hyphens, colon
HONORIFICS = frozenset({"king", "queen", "prince", "princess", "emperor", "empress", "saint", "st", "sir",
                        "lord", "lady", "duke", "count", "pope", "president", "general", "dr", "mr", "mrs",
                        "ms", "professor", "prof", "captain", "bishop", "archbishop"})
_STOPWORD_TEXT = (
    "a an the of and or in on at to for from by with as is are was were be been this that these those it "
    "its their there which who whom whose what when where why how not no do does did has have had i you "
    "he she we they me him her us them my your his our"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def group_of(entity_type: str) -> str:
    """The identity group of a (spaCy or LLM) entity type; unknown types are concepts."""
    return TYPE_GROUPS.get(entity_type.strip().lower().replace(" ", "_"), "concept")


def compatible(group_a: str, group_b: str) -> bool:
    return group_a == group_b or frozenset({group_a, group_b}) in COMPATIBLE


def normalize(name: str) -> str:
    """Case, accents, possessives, punctuation, spacing and a leading 'the' removed: 'Lothair II's' ->
    'lothair ii', 'The Beatles' -> 'beatles'."""
    text = unicodedata.normalize("NFKC", name).strip()
    text = _POSSESSIVE.sub("", text)
    text = _PUNCT.sub(" ", text.lower())
    text = _SPACES.sub(" ", text).strip(" .-/")  # never a key with surrounding whitespace (FalkorDB#1340)
    if text.startswith("the ") and len(text) > 4:
        text = text[4:]  # 'The United Nations' (NER spans often include it) = 'United Nations' (the title)
    return text


def singular(word: str) -> str:
    """A plural common noun made singular (only for concepts: proper names are left alone)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def entity_key(name: str, group: str) -> str:
    """The identity key of a surface form: its normal form, concepts singularised on their last word."""
    key = normalize(name)
    return concept_key(key) if group == "concept" else key


def concept_key(key: str) -> str:
    """A normalised name as a concept's key: its last word singular."""
    if not key:
        return key
    head, _, last = key.rpartition(" ")
    return f"{head} {singular(last)}" if head else singular(last)


def entity_id(key: str, group: str) -> str:
    return f"{group}:{key}"


def title_variants(title: str) -> list[tuple[str, str, str]]:
    """(key, rule, surface) triples a title can name an entity by: the whole title, then looser readings.

    'Ed Wood (film)' -> ('ed wood film', exact, 'Ed Wood (film)'), ('ed wood', parenthetical, 'Ed Wood');
    'asyncio — Asynchronous I/O' -> (... exact), ('asyncio', head, 'asyncio').
    """
    variants: list[tuple[str, str, str]] = []
    seen: set[str] = set()

    def add(text: str, rule: str) -> None:
        key = normalize(text)
        if key and key not in seen and not all(word in STOPWORDS for word in key.split()):
            seen.add(key)
            variants.append((key, rule, _SPACES.sub(" ", text.strip())))

    base = _LEADING_NUMBER.sub("", title).strip()
    add(base, "exact")
    bare = _PAREN.sub("", base)
    add(bare, "parenthetical")
    head = _TITLE_SEPARATOR.split(base, maxsplit=1)[0]
    if head != base:
        add(head, "head")
    return variants


def without_honorific(key: str) -> str | None:
    """'king lothair ii' -> 'lothair ii' (None when the key has no leading title word)."""
    words = key.split(" ")
    if len(words) >= 2 and words[0] in HONORIFICS:
        return " ".join(words[1:])
    return None


def acronym(key: str) -> str | None:
    """'international business machines' -> 'ibm' (None for single words)."""
    words = [w for w in key.split(" ") if w not in STOPWORDS]
    if len(words) < 2:
        return None
    return "".join(w[0] for w in words if w)
