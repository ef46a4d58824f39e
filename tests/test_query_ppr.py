"""Graph-walk retrieval (`ppr`): the PageRank itself on hand-made subgraphs, then the strategy on a small
hand-built graph in the real store (real embeddings) where every edge is known."""

from __future__ import annotations

import pytest

from neoweave.errors import NeoweaveError
from neoweave.ingest.link_contexts import embed_all_link_contexts
from neoweave.query import strategy
from neoweave.query.pagerank import WalkGraph, personalized_pagerank


def _graph(edges: list[tuple[str, str, str]], labels: dict[str, str] | None = None) -> WalkGraph:
    graph = WalkGraph()
    rows = [{"start_id": a, "start_label": (labels or {}).get(a, "Chunk"), "type": kind, "end_id": b,
             "end_label": (labels or {}).get(b, "Chunk"), "via_start": None, "via_end": None, "start_score": None,
             "end_score": None, "weight": 1.0, "entity_id": None, "mentions": None, "entity_type": None}
            for a, kind, b in edges]
    graph.add_rows(rows, {"MENTIONS": 1.0, "LINKS_TO": 1.0})
    return graph


def test_mass_flows_along_edges_and_decays_with_distance():
    graph = _graph([("a", "LINKS_TO", "b"), ("b", "LINKS_TO", "c"), ("d", "LINKS_TO", "e")])
    mass = personalized_pagerank(graph, {"a": 1.0}, damping=0.5)
    assert sum(mass.values()) == pytest.approx(1.0)
    assert mass["a"] > mass["b"] > mass["c"] > 0
    assert mass["d"] == mass["e"] == 0  # not connected to the seed
    # the walk is undirected: seeding the end of a link reaches its start
    assert personalized_pagerank(graph, {"c": 1.0}, damping=0.5)["a"] > 0
    # damping 0: the walk never leaves its seeds
    assert personalized_pagerank(graph, {"a": 1.0}, damping=0.0) == {"a": 1.0, "b": 0.0, "c": 0.0, "d": 0.0,
                                                                      "e": 0.0}


def test_edge_weights_and_focus_steer_the_walk():
    graph = _graph([("s", "LINKS_TO", "x"), ("s", "LINKS_TO", "y")])
    even = personalized_pagerank(graph, {"s": 1.0}, damping=0.5)
    assert even["x"] == pytest.approx(even["y"])
    graph.edges[("s", "LINKS_TO", "x")] = 3.0
    heavier = personalized_pagerank(graph, {"s": 1.0}, damping=0.5)
    assert heavier["x"] > heavier["y"]
    graph.edges[("s", "LINKS_TO", "x")] = 1.0
    graph.relevance.update({"x": 0.1, "y": 0.6})  # y resembles the question
    assert personalized_pagerank(graph, {"s": 1.0}, damping=0.5, focus=0.0)["x"] == pytest.approx(even["x"])
    focused = personalized_pagerank(graph, {"s": 1.0}, damping=0.5, focus=3.0)
    assert focused["y"] / focused["x"] == pytest.approx(2.718281828 ** (3.0 * 0.5), rel=1e-6)


def test_seeds_combine_linearly():
    """PageRank is linear in its restart vector: seeds weighted 3:1 give 3/4 and 1/4 of each seed's own walk."""
    graph = _graph([("e1", "MENTIONS", "c1"), ("e1", "MENTIONS", "c2"), ("c2", "MENTIONS", "e2"),
                    ("e2", "MENTIONS", "c3")])
    first = personalized_pagerank(graph, {"e1": 1.0}, damping=0.5)
    second = personalized_pagerank(graph, {"c3": 1.0}, damping=0.5)
    both = personalized_pagerank(graph, {"e1": 3.0, "c3": 1.0}, damping=0.5)
    for node in graph.labels:
        assert both[node] == pytest.approx(0.75 * first[node] + 0.25 * second[node], abs=1e-7)
    assert personalized_pagerank(graph, {"elsewhere": 1.0}, damping=0.5) == {}  # no seed in the graph
    assert personalized_pagerank(WalkGraph(), {"a": 1.0}, damping=0.5) == {}


def test_names_are_told_from_lowercase_words_by_the_question_span():
    from neoweave.query.entity_linking import cased_words, question_keys, span_is_cased

    question = "Who formed the Beatles, and which city shot the film in 1986?"
    keys = question_keys(question)
    assert span_is_cased(question, keys["beatle"])  # the singular concept key, written "Beatles"
    assert span_is_cased(question, keys["1986"])
    assert not span_is_cased(question, keys["city"]) and not span_is_cased(question, keys["film"])
    assert {"beatles", "1986"} <= cased_words(question) and "city" not in cased_words(question)
    code = "How do I use os.path or __init__ here?"
    assert span_is_cased(code, question_keys(code)["os.path"]) and cased_words(code) == {"os.path", "__init__"}
    opening = "Which films did Nolan direct?"
    assert not span_is_cased(opening, (0, 2)) and span_is_cased(opening, (3, 4))  # a sentence's first word


# --- the strategy on a hand-built graph ------------------------------------------------------------------------

DOCS = {  # section id -> (title, chunk text)
    "alpha": ("Alpha Corp", "Alpha Corp is a maker of watches. Alpha Corp was founded by Bruno Keller."),
    "keller": ("Bruno Keller", "Bruno Keller was a Swiss engineer, born in the town of Ardez in 1901."),
    "ardez": ("Ardez", "Ardez is a village in the Lower Engadine valley."),
    "omega": ("Omega", "Omega is a letter of the Greek alphabet."),
}
ENTITIES = {  # id -> (name, type, home section, chunks mentioning it)
    "org:alpha corp": ("Alpha Corp", "org", "alpha", ["alpha:0"]),
    "person:bruno keller": ("Bruno Keller", "person", "keller", ["alpha:0", "keller:0"]),
    "gpe:ardez": ("Ardez", "gpe", "ardez", ["keller:0", "ardez:0"]),
    "concept:letter": ("letter", "concept", None, ["omega:0"] + [f"filler{i}:0" for i in range(12)]),
}
LINKS = [("alpha", "keller", "inferred"), ("keller", "ardez", "authored")]


def _load(store, embedder, sections: dict[str, tuple[str, str]], entities_by_id: dict, links: list) -> None:
    """Sections (one chunk each), entities with their homes and mentions, and section links, in the real store."""
    store.apply_schema(embedder.model_name, embedder.dimension)
    texts = [text for _, text in sections.values()]
    chunks = [{"section": sid, "id": f"{sid}:0", "title": title, "text": text, "embedding": vector}
              for (sid, (title, text)), vector in zip(sections.items(), embedder.embed(texts), strict=True)]
    store.query("UNWIND $rows AS row "
                "CREATE (d:Document {id: row.section, title: row.title})-[:HAS_SECTION]->"
                "(s:Section {id: row.section, doc_id: row.section, title: row.title})-[:HAS_CHUNK]->"
                "(c:Chunk {id: row.id, doc_id: row.section, section_id: row.section, text: row.text, order: 0, "
                "token_count: 20, embedding: vecf32(row.embedding)})", {"rows": chunks}, write=True)
    names = [name for name, *_ in entities_by_id.values()]
    entities = [{"id": eid, "name": name, "key": name.lower(), "type": kind, "home": home, "chunks": mentioned,
                 "mentions": len(mentioned), "embedding": vector}
                for (eid, (name, kind, home, mentioned)), vector in zip(entities_by_id.items(), embedder.embed(names),
                                                                       strict=True)]
    store.query("UNWIND $rows AS row CREATE (e:Entity:__Entity__ {id: row.id, name: row.name, key: row.key, "
                "type: row.type, mention_count: row.mentions, aliases_text: '', embedding: vecf32(row.embedding)})",
                {"rows": entities}, write=True)
    store.query("UNWIND $rows AS row UNWIND row.chunks AS chunk_id MATCH (e:Entity {id: row.id}) "
                "MATCH (c:Chunk {id: chunk_id}) CREATE (c)-[:MENTIONS {count: 1}]->(e)", {"rows": entities},
                write=True)
    store.query("UNWIND $rows AS row MATCH (e:Entity {id: row.id}) MATCH (s:Section {id: row.home}) "
                "CREATE (e)-[:DESCRIBED_BY]->(s)", {"rows": [e for e in entities if e["home"]]}, write=True)
    store.query("UNWIND $rows AS row MATCH (s:Section {id: row[0]}) MATCH (t:Section {id: row[1]}) "
                "CREATE (s)-[:LINKS_TO {method: row[2], order: 0}]->(t)", {"rows": [list(x) for x in links]},
                write=True)
    embed_all_link_contexts(store, embedder, progress=False)  # as ingest and enrich kg do for their links


@pytest.fixture
def walk_graph(falkordb_store, embedder):
    sections = dict(DOCS) | {f"filler{i}": (f"Filler {i}", f"Filler page {i} mentions a letter.") for i in range(12)}
    _load(falkordb_store, embedder, sections, ENTITIES, LINKS)
    return falkordb_store


QUESTION = "Where was the founder of Alpha Corp born?"


def test_ppr_walks_from_the_named_entity_to_the_bridge_page(walk_graph, embedder):
    result = strategy("ppr", walk_graph, embedder, k=3).retrieve(QUESTION)
    ranked = [item.chunk_id for item in result.items]
    # Alpha Corp's home first; Bruno Keller's page, reached through the mention and the inferred link, next
    assert ranked[:2] == ["alpha:0", "keller:0"]
    assert [item.origin for item in result.items] == ["walk"] * len(result.items)
    assert [item.score for item in result.items] == sorted((item.score for item in result.items), reverse=True)
    assert "omega:0" not in ranked
    # the trace: seeds with their share, top nodes with their mass, the stored relationships walked
    assert set(result.trace.seeds) >= {"org:alpha corp", "alpha:0"}
    assert sum(result.trace.seeds.values()) == pytest.approx(1.0)
    assert result.trace.scores["alpha:0"] == pytest.approx(result.items[0].score)
    edges = set(result.trace.relationships)
    assert ("org:alpha corp", "DESCRIBED_BY", "alpha") in edges and ("alpha", "HAS_CHUNK", "alpha:0") in edges
    assert ("alpha", "LINKS_TO", "keller") in edges and ("alpha:0", "MENTIONS", "person:bruno keller") in edges
    # the links ppr ranks carry their context embedding (ingest and enrich kg embed them): it checks, only reads
    statements = result.trace.statements
    assert [s for s in statements if "context_embedding" not in s] == [
        "chunk_vector_search", "kg_link_entities", "entity_written_as", "ppr_expand", "ppr_expand", "chunk_contexts"]
    assert "set_link_context_embeddings" not in statements
    assert statements.index("chunk_links_missing_context_embedding") < statements.index("ppr_expand")
    again = strategy("ppr", walk_graph, embedder, k=3).retrieve(QUESTION)
    assert [item.chunk_id for item in again.items] == ranked
    assert result.as_dict()["trace"]["seeds"]  # what `neoweave query --json` prints


def test_without_links_or_homes_mass_only_flows_through_mentions(walk_graph, embedder):
    plain = strategy("ppr", walk_graph, embedder, k=3, focus=0.0, dense_k=0, hops=3)
    no_links = plain.retrieve(QUESTION, links="none", home_weight=0.0)
    assert "chunk_links_missing_context_embedding" not in no_links.trace.statements  # no link is ranked
    authored = plain.retrieve(QUESTION, links="authored")  # alpha:0 is expanded; its only link is inferred
    assert "chunk_links_missing_context_embedding" in authored.trace.statements
    walked = plain.retrieve(QUESTION)
    # Alpha Corp's only edge left is its mention in alpha:0; from there Bruno Keller (hop 2), then his page (3)
    assert [item.chunk_id for item in no_links.items][:2] == ["alpha:0", "keller:0"]
    assert not any(rel in {"LINKS_TO", "DESCRIBED_BY"} for _, rel, _ in no_links.trace.relationships)
    mass = {item.chunk_id: item.score for item in walked.items}
    assert mass["keller:0"] > {item.chunk_id: item.score for item in no_links.items}["keller:0"]


def test_entity_and_chunk_seeds_combine_as_documented(walk_graph, embedder):
    result = strategy("ppr", walk_graph, embedder, dense_k=3, chunk_weight=0.05).retrieve(QUESTION)
    seeds = result.trace.seeds
    # entity: link score 1 / 1 mention; dense chunks: 0.05 * min-max scaled cosine (the best 0.05, the worst 0)
    entity_share = seeds["org:alpha corp"]
    chunk_shares = {n: w for n, w in seeds.items() if n.endswith(":0")}
    assert max(chunk_shares.values()) / entity_share == pytest.approx(0.05)
    assert len(chunk_shares) == 2  # the least similar of the three scales to 0 and is no seed
    assert sum(seeds.values()) == pytest.approx(1.0)
    # no entity in the question: the dense chunks alone, by the same weights (equal ones without chunk_weight)
    unnamed = strategy("ppr", walk_graph, embedder, dense_k=3, entity_k=0).retrieve("which valley is the village in")
    assert len(unnamed.trace.seeds) == 2 and all(node.endswith(":0") for node in unnamed.trace.seeds)
    assert next(iter(unnamed.trace.seeds)) == unnamed.items[0].chunk_id == "ardez:0"
    even = strategy("ppr", walk_graph, embedder, dense_k=3, entity_k=0, chunk_weight=0.0)
    assert list(even.retrieve("which valley is the village in").trace.seeds.values()) == [pytest.approx(1 / 3)] * 3


def test_subgraph_fetch_is_bounded(walk_graph, embedder):
    vector = embedder.embed_query("letters")
    params = {"entity_ids": ["concept:letter"], "chunk_ids": [], "embedding": vector, "link_methods": ["authored"]}
    rows = walk_graph.run("ppr_expand", {**params, "per_node": 4, "max_mentions": 100})
    assert len([r for r in rows if r["type"] == "MENTIONS"]) == 4  # 13 mentions, 4 kept: the closest
    assert walk_graph.run("ppr_expand", {**params, "per_node": 4, "max_mentions": 10}) == []  # a hub: no edges
    # the strategy expands the seeds, then at most `beam` nodes per further hop
    result = strategy("ppr", walk_graph, embedder, hops=3, beam=2, per_node=2, trace_nodes=1000).retrieve(QUESTION)
    assert result.trace.statements.count("ppr_expand") == 3
    expanded = len(result.trace.seeds) + 2 * 2
    subgraph = len(result.trace.scores)  # every node of the subgraph, with trace_nodes this high
    assert subgraph <= expanded * (1 + 2 * 6)  # each expanded node: <= per_node edges per kind (6 kinds)
    wide = strategy("ppr", walk_graph, embedder, trace_nodes=1000).retrieve(QUESTION)
    assert len(wide.trace.scores) > subgraph


def test_ppr_parameter_errors(walk_graph, embedder):
    with pytest.raises(NeoweaveError, match="damping must be in"):
        strategy("ppr", walk_graph, embedder, damping=1.0).retrieve("x")
    with pytest.raises(NeoweaveError, match="links must be one of"):
        strategy("ppr", walk_graph, embedder, links="all").retrieve("x")
    with pytest.raises(NeoweaveError, match="home_weight must be >= 0"):
        strategy("ppr", walk_graph, embedder, home_weight=-1.0).retrieve("x")
    with pytest.raises(NeoweaveError, match="engine gds needs the neo4j store"):
        strategy("ppr", walk_graph, embedder, engine="gds").retrieve("x")
    assert strategy("ppr", walk_graph, embedder, dense_k=0, entity_k=0).retrieve("???").items == []
    # the only seed is generic and generic seeds weigh nothing: no walk, no context
    generic = strategy("ppr", walk_graph, embedder, dense_k=0, entity_k=0)
    assert generic.retrieve("a letter", generic_weight=0.0).items == []
    walked = generic.retrieve("a letter", generic_weight=0.1).items  # linked, walked to its mentions
    assert walked and {item.chunk_id for item in walked} <= set(ENTITIES["concept:letter"][3])


def test_gds_engine_walks_like_the_python_one(neo4j_store):
    """Neo4j with the Graph Data Science plugin (NEO4J_PLUGINS='["graph-data-science"]' in docker/.env)."""
    from neoweave.query.pagerank_gds import gds_personalized_pagerank

    graph = _graph([("e1", "MENTIONS", "c1"), ("e1", "MENTIONS", "c2"), ("c2", "LINKS_TO", "c3"),
                    ("c3", "MENTIONS", "e2"), ("e2", "MENTIONS", "c4")])
    graph.edges[("c2", "LINKS_TO", "c3")] = 4.0
    graph.relevance.update({"c3": 0.7, "c4": 0.1})
    seeds = {"e1": 1.0, "c4": 0.05}
    try:
        gds = gds_personalized_pagerank(neo4j_store.run, graph, seeds, damping=0.5, focus=3.0)
    except NeoweaveError as exc:  # Neo4j rejected gds.*: no Graph Data Science on this server
        if "gds" not in str(exc).lower():
            raise
        pytest.skip(f"Neo4j without Graph Data Science: {exc}")
    python = personalized_pagerank(graph, seeds, damping=0.5, focus=3.0)
    assert sorted(gds, key=gds.get) == sorted(python, key=python.get)
    for node in graph.labels:
        assert gds[node] == pytest.approx(python[node], abs=1e-4)


def test_strategies_that_rank_links_by_context_embedding_say_so():
    # a strategy whose statements read `context_embedding` must be flagged `reads_link_contexts` (it needs the
    # contexts ingest and enrich kg embed, skips a link without one and says in its trace which step embeds it)
    from pathlib import Path

    import neoweave.cypher
    from neoweave.registry import STRATEGIES

    folder = Path(neoweave.cypher.__file__).parent
    readers = {path.stem for path in folder.rglob("*.cypher") if "context_embedding" in path.read_text()
               and "SET" not in path.read_text() and "IS NULL" not in path.read_text()
               and "AS embedded" not in path.read_text()}  # (the link writers ask only whether a link has one)
    # a new reader: flag its strategy, then extend this set (walk_index_*: ppr's walk index)
    assert readers == {"larag_expand", "larag_expand_chunks", "ppr_expand", "walk_index_links",
                       "walk_index_link_vectors"}
    assert STRATEGIES.get("larag").reads_link_contexts and STRATEGIES.get("ppr").reads_link_contexts
    assert not STRATEGIES.get("naive").reads_link_contexts and not STRATEGIES.get("kg").reads_link_contexts


# --- generic names and comparisons (retrieval II) --------------------------------------------------------------

FILMS = {  # section id -> (title, chunk text)
    "red": ("Red Harbor", "Red Harbor is a 1990 drama film directed by Carla Moss."),
    "carla": ("Carla Moss", "Carla Moss is a Canadian director, born in 1950 in Toronto."),
    "toronto": ("Toronto", "Toronto is the largest city of Canada."),
    "score": ("Red Harbor (soundtrack)", "The soundtrack of Red Harbor was released in 1991."),
    "blue": ("Blue Canyon", "Blue Canyon is a 1985 western film directed by Bob Stone."),
    "bob": ("Bob Stone", "Bob Stone is an American director, born in 1941 in Ohio."),
    "rao": ("Vijay Rao", "Vijay Rao is an Indian Film Director, Writer and Producer."),
} | {f"fan{i}": (f"Fan page {i}", f"Fan page {i} reviews Blue Canyon, a film by a film director.") for i in range(9)}
FILM_ENTITIES = {
    "work:red harbor": ("Red Harbor", "work_of_art", "red", ["red:0"]),
    "person:carla moss": ("Carla Moss", "person", "carla", ["red:0", "carla:0"]),
    "gpe:toronto": ("Toronto", "gpe", "toronto", ["carla:0", "toronto:0"]),
    "work:blue canyon": ("Blue Canyon", "work_of_art", "blue", ["blue:0"] + [f"fan{i}:0" for i in range(9)]),
    "person:bob stone": ("Bob Stone", "person", "bob", ["blue:0", "bob:0"]),
    # spaCy tags "Film Director" a name in one sentence; the corpus writes "film director" nine times
    "name:film director": ("Film Director", "name", None, ["rao:0"]),
    "concept:film director": ("film director", "concept", None, [f"fan{i}:0" for i in range(9)]),
    "name:producer": ("producer", "name", None, ["rao:0"]),  # a "name" written in lowercase
    "work:red harbor ii": ("Red Harbor II", "work_of_art", None, ["fan0:0"]),  # a sibling of the film's name
    "gpe:harbor": ("Harbor", "gpe", None, ["toronto:0"]),  # a name inside the film's name
}
FILM_LINKS = [("red", "carla", "inferred"), ("red", "score", "authored"), ("carla", "toronto", "inferred"),
              ("blue", "bob", "inferred")]


@pytest.fixture
def film_graph(falkordb_store, embedder):
    _load(falkordb_store, embedder, FILMS, FILM_ENTITIES, FILM_LINKS)
    return falkordb_store


def test_names_the_corpus_writes_as_common_nouns_are_generic(film_graph):
    from neoweave.query.entity_linking import WrittenAs, written_as
    from neoweave.query.ppr import GENERIC_TYPES

    written = written_as(film_graph.run, ["name:film director", "name:producer", "work:red harbor",
                                          "concept:film director"], GENERIC_TYPES)
    # the name's weight is the common noun's: mentions of the concept twin (9), not of the one tagged name
    assert written == {"name:film director": WrittenAs("Film Director", 9), "name:producer": WrittenAs("producer", 1),
                       "concept:film director": WrittenAs("film director", 9),
                       "work:red harbor": WrittenAs("Red Harbor", None)}
    assert written_as(film_graph.run, [], GENERIC_TYPES) == {}


def test_the_sides_of_a_comparison_are_the_names_it_writes_in_full():
    from neoweave.query.entity_linking import WrittenAs, comparison_sides

    question = "Which came first, the forming of The Dandy Warhols or the birth of Robert Young?"
    written = {"org:dandy warhols": WrittenAs("The Dandy Warhols", None), "person:young": WrittenAs("Young", None),
               "concept:birth": WrittenAs("birth", 12), "name:first": WrittenAs("First", None)}
    linked = {"org:dandy warhols": 1.0, "person:young": 1.0, "concept:birth": 0.1, "name:first": 0.1}
    # "Young" is part of the name "Robert Young"; a lowercase match or a common noun is no side
    assert comparison_sides(question, linked, written) == {"org:dandy warhols"}
    titles = "Which film came out first, The Lord of the Rings or Red Harbor?"
    named = {"work:lotr": WrittenAs("The Lord of the Rings", None), "work:red": WrittenAs("Red Harbor", None)}
    assert comparison_sides(titles, {"work:lotr": 1.0, "work:red": 1.0}, named) == {"work:lotr", "work:red"}
    # punctuation ends a name: "American, Mark King" is no longer name holding "Mark King"
    people = {"person:mark king": WrittenAs("Mark King", None), "norp:american": WrittenAs("American", None)}
    assert comparison_sides("Which singer is American, Mark King or Nick Hexum?",
                            {"person:mark king": 1.0, "norp:american": 1.0}, people) == set(people)
    banks = {"person:iain banks": WrittenAs("Iain Banks", None)}  # "Between" is the sentence's first word
    assert comparison_sides("Between Iain Banks and Irwin Shaw, who wrote more?", {"person:iain banks": 1.0},
                            banks) == {"person:iain banks"}


def test_a_common_noun_tagged_as_a_name_does_not_attract_the_walk(film_graph, embedder):
    # the question capitalises the common noun, as "Film Director" was capitalised on Vijay Rao's page
    question = "Which city does the Film Director of Red Harbor come from?"
    naive = strategy("ppr", film_graph, embedder, k=3, common_nouns=False).retrieve(question)
    assert naive.trace.seeds["name:film director"] == pytest.approx(naive.trace.seeds["work:red harbor"])
    assert "rao:0" in [item.chunk_id for item in naive.items]  # the hub this guards against
    result = strategy("ppr", film_graph, embedder, k=3).retrieve(question)
    ranked = [item.chunk_id for item in result.items]
    assert ranked[0] == "red:0" and "carla:0" in ranked and "rao:0" not in ranked
    # capped at generic_weight and divided by the common noun's 9 mentions, not the name's 1
    seeds = result.trace.seeds
    assert seeds["name:film director"] / seeds["work:red harbor"] == pytest.approx(0.1 / 9)
    assert "entity_written_as" in result.trace.statements
    assert "entity_written_as" not in naive.trace.statements


def test_each_side_of_a_comparison_reaches_its_bridge(film_graph, embedder):
    question = "Which film has the director born first, Red Harbor or Blue Canyon?"
    # Blue Canyon has ten mentions: divided by them, its side found the film and lost its director's page
    lopsided = {item.chunk_id for item in strategy("ppr", film_graph, embedder, k=5, comparison_exponent=1.0)
                .retrieve(question).items}
    assert {"red:0", "carla:0", "blue:0"} <= lopsided and "bob:0" not in lopsided
    result = strategy("ppr", film_graph, embedder, k=5).retrieve(question)
    assert {"red:0", "carla:0", "blue:0", "bob:0"} <= {item.chunk_id for item in result.items}
    assert result.trace.seeds["work:blue canyon"] == pytest.approx(result.trace.seeds["work:red harbor"])
    # a question that compares nothing keeps the inverse frequency
    single = strategy("ppr", film_graph, embedder, k=4).retrieve("Who directed Red Harbor and Blue Canyon?")
    assert single.trace.seeds["work:red harbor"] > 5 * single.trace.seeds["work:blue canyon"]


def test_an_embedding_sibling_of_a_name_the_question_writes_weighs_little(film_graph, embedder):
    from neoweave.query.entity_linking import link_question

    question = "Where was the director of Red Harbor born?"
    vector = embedder.embed_query(question)

    def link(**options):
        return link_question(film_graph.run, film_graph, question, vector,
                             **{"entity_k": len(FILM_ENTITIES), "min_similarity": 0.0, **options})

    everything = link()
    assert everything["work:red harbor"] == 1.0 and 0 < everything["work:red harbor ii"] < 1.0
    # "Harbor" is inside the longer name: neither its name n-gram nor its full-text hit links it as a name
    assert everything["gpe:harbor"] < 1.0 and link(entity_k=0) == {"work:red harbor": 1.0}
    assert everything["person:bob stone"] < 1.0  # a neighbour sharing no word with the name: kept below
    siblings = {"work:red harbor ii", "gpe:harbor"}  # "red", "harbor": siblings of the name, not the name
    demoted = link(sibling_factor=0.1)
    assert demoted == {entity: score * (0.1 if entity in siblings else 1.0) for entity, score in everything.items()}
    recognised = link(sibling_factor=0.0)
    assert recognised == {entity: score for entity, score in everything.items() if entity not in siblings}
    assert link(vector_factor=0.5)["person:bob stone"] == pytest.approx(everything["person:bob stone"] * 0.5)
    wide = {"entity_k": len(FILM_ENTITIES), "min_entity_similarity": 0.0}
    walked = strategy("ppr", film_graph, embedder, k=3, **wide).retrieve(question).trace.seeds
    equal = strategy("ppr", film_graph, embedder, k=3, sibling_weight=1.0, **wide).retrieve(question).trace.seeds
    assert walked["work:red harbor ii"] / walked["work:red harbor"] == pytest.approx(
        equal["work:red harbor ii"] / equal["work:red harbor"] * 0.1)
    assert "work:red harbor ii" not in strategy("ppr", film_graph, embedder, k=3, sibling_weight=0.0, **wide
                                                ).retrieve(question).trace.seeds


class ScriptedReranker:
    """Picks the passages whose titles it is told to, by their numbers in the prompt (orchestration only: the
    real model's gain and cost are in docs/strategies/ppr.md)."""

    model = "scripted"
    concurrency = 1

    def __init__(self, titles: list[str] | None) -> None:
        self.titles = titles  # None: an answer that is no ranking
        self.prompts: list[str] = []

    def structured(self, messages, schema, **kwargs):
        import re

        from neoweave.llm.gateway import LLMCall, StructuredResult

        text = messages[-1]["content"]
        self.prompts.append(text)
        call = LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=300, completion_tokens=8)
        if self.titles is None:
            return StructuredResult(None, "I cannot tell.", [call], error="no JSON")
        numbers = {title: int(number) for number, title in re.findall(r"^\[(\d+)\] ([^:]+):", text, re.M)}
        answer = {"passages": [numbers[title] for title in self.titles] + [99, numbers[self.titles[0]]]}
        return StructuredResult(schema.model_validate(answer), str(answer), [call])


def test_rerank_reorders_the_walks_candidates_and_keeps_k(film_graph, embedder):
    from neoweave.query.rerank import reorder

    question = "Which film has the director born first, Red Harbor or Blue Canyon?"
    walk = strategy("ppr", film_graph, embedder, k=6).retrieve(question)
    llm = ScriptedReranker(["Bob Stone", "Carla Moss"])
    reranked = strategy("ppr", film_graph, embedder, llm, k=3, rerank=6).retrieve(question)
    assert [item.section_title for item in reranked.items][:2] == ["Bob Stone", "Carla Moss"]
    # the rest keep the walk's order; numbers out of range and repeats are ignored
    rest = [item.chunk_id for item in walk.items if item.section_title not in {"Bob Stone", "Carla Moss"}]
    assert reranked.items[2].chunk_id == rest[0]
    assert [item.details["rerank"] for item in reranked.items] == [1, 2, None]
    assert llm.prompts[0].count("\n[") == 6 and "Question: " + question in llm.prompts[0]
    assert reranked.cost.llm_calls == 1 and reranked.cost.prompt_tokens == 300
    assert "rerank" in reranked.cost.milliseconds
    # a reply that is no ranking leaves the walk's order, counted as a failure
    failed = strategy("ppr", film_graph, embedder, ScriptedReranker(None), k=3, rerank=6).retrieve(question)
    assert [item.chunk_id for item in failed.items] == [item.chunk_id for item in walk.items][:3]
    assert failed.cost.llm_failures == 1
    assert [item.chunk_id for item in reorder(list(walk.items), [])] == [item.chunk_id for item in walk.items]
    # off by default; on, it needs an LLM
    from neoweave.query.ppr import PPRRetriever

    assert not PPRRetriever.wants_llm() and PPRRetriever.wants_llm({"rerank": 20})
    assert walk.cost.llm_calls == 0
    with pytest.raises(NeoweaveError, match="rerank needs an LLM"):
        strategy("ppr", film_graph, embedder, rerank=20).retrieve(question)
