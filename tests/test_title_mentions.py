"""Title mentions: the corpus's titles found in chunk text (pure matching, then incrementally in the graph)."""

from __future__ import annotations

import dataclasses

from conftest import ingest_records

from neoweave.enrich import run
from neoweave.enrich.homes import TitleIndex
from neoweave.enrich.title_mentions import MAX_ANCHORS, Gazetteer
from neoweave.nlp.names import title_variants


def _gazetteer(*titles: str) -> Gazetteer:
    index = TitleIndex()
    for number, title in enumerate(titles):
        for key, rule, surface in title_variants(title):
            index.add(key, "document-title" if rule == "exact" else rule, f"s{number}")
            index.surfaces[key].add(surface)
    return Gazetteer.from_index(index)


def test_titles_are_found_case_sensitively_longest_first():
    gazetteer = _gazetteer("Kiss and Tell (1945 film)", "The Beatles", "Tasks", "asyncio — Asynchronous I/O",
                           "Kiss")
    found = {m.key: m for m in gazetteer.find(
        "Shirley Temple starred in Kiss and Tell. She met the Beatles' manager. Kiss me, said the kiss and tell "
        "girl. Tasks are scheduled by asyncio, and Tasks run concurrently.")}
    # lowercase one-word titles ('asyncio', but also modules like 'string' or 'time') are too ambiguous
    assert set(found) == {"kiss and tell", "beatles", "tasks"}
    assert found["kiss and tell"].group == "name" and found["kiss and tell"].name == "Kiss and Tell"
    assert found["kiss and tell"].context.startswith("Shirley Temple starred in Kiss and Tell")
    assert found["tasks"].count == 1  # the sentence-initial 'Tasks' is not a mention of the section
    assert "kiss" not in found  # inside the longer title; 'Kiss me' is sentence-initial


def test_known_names_and_generic_titles_add_nothing():
    gazetteer = _gazetteer("Ed Wood", "Examples", "Examples", "Examples", "Examples")
    assert "examples" not in gazetteer.surfaces  # four sections named 'Examples': not a home, not a title
    assert gazetteer.find("A film about Ed Wood's life.", known_keys={"ed wood"}) == []
    [mention] = gazetteer.find("A film about Ed Wood's life.")
    assert mention.key == "ed wood" and mention.name == "Ed Wood"


def test_titles_whose_first_token_is_not_their_keys_first_word_are_found():
    # "M. Ward": the key starts with "m.", the text's first token is "M"; "I'll": "i ll" and "I'll"; "F.I.R.": the
    # scan strips the final dot as a sentence's
    gazetteer = _gazetteer("M. Ward", "J. B. Handelsman", "F.I.R. (album)", "I'll Be Here Awhile")
    found = {m.key: m.name for m in gazetteer.find(
        "Transfiguration of Vincent is the third studio album by M. Ward. A cartoon by J. B. Handelsman. "
        "A song by F.I.R. was a hit, and so was I'll Be Here Awhile.")}
    assert set(found) == {"m. ward", "j. b. handelsman", "f.i.r", "i ll be here awhile"}, found
    assert found["m. ward"] == "M. Ward"
    # a title with its article is still found from the word after it, named without the article, as before
    articles = _gazetteer("The Dandy Warhols", "...The Dandy Warhols Come Down")
    assert "the" not in articles.first_words
    assert [m.name for m in articles.find("Zia McCabe plays in The Dandy Warhols.")] == ["Dandy Warhols"]


def test_a_text_without_any_anchor_word_is_skipped_and_the_skip_changes_no_result():
    """A few titles (older chunks scanned for new ones) carry anchor words; a text holding none is not tokenized.
    Every match holds one, so the mentions are those of the full scan, text for text."""
    gazetteers = [_gazetteer("Kiss and Tell (1945 film)", "The Beatles", "Tasks", "Kiss"),
                  _gazetteer("M. Ward", "J. B. Handelsman", "F.I.R. (album)", "I'll Be Here Awhile"),
                  _gazetteer("The Dandy Warhols", "...The Dandy Warhols Come Down", "A Tale of Two Cities"),
                  _gazetteer("Ed Wood", "Gone to the Lake", "Orrin Vale")]
    texts = ["Shirley Temple starred in Kiss and\nTell. She met the Beatles' manager. Tasks run. And Tasks end.",
             "Transfiguration of Vincent is the third studio album by M. Ward. A cartoon by J. B. Handelsman. "
             "A song by F.I.R was a hit, and so was I'll Be Here Awhile.",
             "Zia McCabe plays in the Dandy Warhols; he read a Tale of Two Cities, then ...The Dandy Warhols Come "
             "Down.", "A film about Ed Wood's life. Orrin Vale said Gone to the Lake was his best book.",
             "Nothing here names a title: kiss, tell, beatles, ward, warhols, lake in lower case.", ""]
    assert all(g.anchors for g in gazetteers)
    assert "Ward" in gazetteers[1].anchors and gazetteers[2].anchors == {"Warhols", "Cities"}  # no article
    for gazetteer in gazetteers:
        full = dataclasses.replace(gazetteer, anchors=None)
        for text in texts:
            assert gazetteer.find(text) == full.find(text), (text, sorted(gazetteer.anchors))
    assert gazetteers[0].find(texts[0]) and not gazetteers[0].find(texts[4])
    many = _gazetteer(*(f"Old Title{n:03d}" for n in range(MAX_ANCHORS + 1)))
    assert many.anchors is None  # many titles (a new chunk against all of them): no prefilter


RECORDS = [
    {"id": "r1", "title": "Gone to the Lake",
     "text": "Gone to the Lake is a novel of 1951. Critics said Gone to the Lake was the best book of the year."},
    {"id": "r2", "title": "Orrin Vale",
     "text": "Orrin Vale was a writer from Maine. He said that Gone to the Lake was his best book."},
]


def _title_mentions(store) -> set[tuple[str, str]]:
    rows = store.query("MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WHERE m.source ENDS WITH ':titles' "
                       "RETURN c.doc_id AS doc, m.origin_id AS origin")
    return {(r["doc"], r["origin"]) for r in rows}


def test_title_mentions_become_homes_and_inferred_links_incrementally(falkordb_store, embedder, tmp_path):
    store = falkordb_store
    ingest_records(store, embedder, tmp_path / "a.jsonl", RECORDS[1:])
    run("kg", store, embedder=embedder, progress=False)
    assert _title_mentions(store) == set()  # no title of the corpus yet names anything in r2's text
    ingest_records(store, embedder, tmp_path / "b.jsonl", RECORDS)
    report = run("kg", store, embedder=embedder, progress=False)
    assert report.chunks == 1  # only the new document is extracted
    # r2 was extracted before the title existed: the new title is looked for in its text
    assert ("r2", "name:gone to the lake") in _title_mentions(store)  # spaCy reads only 'Lake' (a place)
    links = store.query("MATCH (s:Section)-[l:LINKS_TO {method: 'inferred'}]->(t:Section) "
                        "RETURN s.doc_id AS source, t.doc_id AS target, l.text AS text")
    assert {"source": "r2", "target": "r1", "text": "Gone to the Lake"} in links
    assert report.counters["title_mentions"] >= 1
    again = run("kg", store, embedder=embedder, progress=False)
    assert again.chunks == 0 and again.counters.get("title_mentions", 0) == 0
    dupes = store.query("MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WITH c, e, m.origin_id AS o, count(*) AS n "
                        "WHERE n > 1 RETURN count(*) AS n")
    assert dupes[0]["n"] == 0
