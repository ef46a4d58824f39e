"""Title mentions: the corpus's titles found in chunk text (pure matching, then incrementally in the graph)."""

from __future__ import annotations

import dataclasses

from conftest import _graph_of_its_own, ingest_records

from neoweave.enrich import run
from neoweave.enrich.homes import TitleIndex
from neoweave.enrich.title_mentions import MAX_ANCHORS, Gazetteer
from neoweave.ingest import delete_documents
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


LETTERS = [
    {"id": "r5", "title": "Letters", "text": "Orrin Vale Junior wrote letters from Maine. He read Gone to the Lake."},
    {"id": "r6", "title": "Orrin Vale Junior", "text": "Orrin Vale Junior was the son of a writer from Maine."},
]


def _forms(store) -> set[tuple[str, str, bool, int]]:
    """Every surface form on every chunk: (chunk, origin, written by the title scan, count)."""
    rows = store.query("MATCH (c:Chunk)-[m:MENTIONS]->(:Entity) "
                       "RETURN c.id AS chunk, coalesce(m.origin_ids, [m.origin_id]) AS origins, "
                       "coalesce(m.sources, [m.source]) AS sources, coalesce(m.counts, [m.count]) AS counts")
    return {(r["chunk"], origin, source.endswith(":titles"), count) for r in rows
            for origin, source, count in zip(r["origins"], r["sources"], r["counts"], strict=True)}


def test_title_mentions_follow_titles_that_go_or_hide_others_as_a_rebuild_finds_them(falkordb_server, falkordb_store,
                                                                                     second_store, embedder, tmp_path):
    """A page deleted takes its title's mentions in other pages with it; a new title longer than an older one's
    match ("Orrin Vale Junior" over "Orrin Vale") replaces it, and the older one comes back when it goes: the
    mentions are those a graph built from the remaining pages holds (seed 459 of the rebuild check: a title
    mention outlived its page)."""
    store, rebuilt = falkordb_store, second_store
    ingest_records(store, embedder, tmp_path / "a.jsonl", [*RECORDS, LETTERS[0]])
    run("kg", store, embedder=embedder, progress=False)
    held = {(chunk.split("#")[0], origin) for chunk, origin, by_title, _ in _forms(store) if by_title}
    assert {("r2", "name:gone to the lake"), ("r5", "name:gone to the lake"), ("r5", "name:orrin vale")} <= held

    ingest_records(store, embedder, tmp_path / "b.jsonl", [*RECORDS, *LETTERS])  # a title over 'Orrin Vale'
    report = run("kg", store, embedder=embedder, progress=False)
    assert report.counters.get("chunks_title_scanned_again", 0) >= 1
    ingest_records(rebuilt, embedder, tmp_path / "c.jsonl", [*RECORDS, *LETTERS])
    run("kg", rebuilt, embedder=embedder, progress=False)
    assert _forms(store) == _forms(rebuilt)
    assert ("r5", "name:orrin vale") not in {(c.split("#")[0], o) for c, o, by_title, _ in _forms(store) if by_title}

    for doc_id in ("r1", "r6"):  # the titled pages go: their titles no longer name anything
        delete_documents(store, doc_id, embedder)
    report = run("kg", store, embedder=embedder, progress=False)
    assert report.counters.get("chunks_naming_changed_titles", 0) >= 2
    graphs = _graph_of_its_own(falkordb_server)
    rebuilt = next(graphs)
    try:
        ingest_records(rebuilt, embedder, tmp_path / "d.jsonl", [RECORDS[1], LETTERS[0]])
        run("kg", rebuilt, embedder=embedder, progress=False)
        forms = _forms(store)
        assert forms == _forms(rebuilt)
    finally:
        graphs.close()
    assert not {origin for _, origin, by_title, _ in forms if by_title} & {"name:gone to the lake"}
    assert ("r5", "name:orrin vale") in {(c.split("#")[0], o) for c, o, by_title, _ in forms if by_title}
