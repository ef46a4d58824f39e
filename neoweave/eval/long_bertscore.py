"""BERTScore over every word piece of texts longer than the model's input: the thesis's retrieval BERTScore
(001, eq. 4.2-4.4) averages over all tokens of the retrieved and of the ground-truth context.

bert-score truncates each text to the model's input (512 word pieces), so a longer context scored as its first
512 pieces: on the Python docs FAQ, naive's 5 chunks (879 tokens) and 10 chunks (1,797) scored exactly alike.
Here a long text is encoded in overlapping windows (half a window apart), and each piece keeps the embedding of
the window where it sits farthest from an edge. A text that fits one window scores as bert-score scores it: the
same layer, no idf weighting, no baseline rescaling, the average over the text's own pieces, and the best match
sought among the other text's pieces and its [CLS] and [SEP] (bert-score masks those out of the average only;
here every window's pair is a match candidate).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from typing import Any

from neoweave.errors import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Encoder:
    tokenizer: Any
    model: Any
    layer: int
    window: int
    """Word pieces a window holds, [CLS] and [SEP] aside."""


@cache
def _encoder(name: str, layer: int | None) -> _Encoder:
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise ConfigError("BERTScore needs the transformers package", hint="pip install 'neoweave[eval]'") from exc
    from neoweave.embeddings import model_location

    location = model_location(name)
    tokenizer = AutoTokenizer.from_pretrained(location, use_fast=False)  # bert-score's tokenizer
    model = AutoModel.from_pretrained(location).eval()
    layers = model.config.num_hidden_layers
    if layer is not None and not 0 <= layer <= layers:
        raise ConfigError(f"--bertscore-layer {layer} is outside {name}'s 0..{layers}")
    longest = min(int(tokenizer.model_max_length), int(model.config.max_position_embeddings))
    return _Encoder(tokenizer, model, layers if layer is None else layer, longest - 2)


def _windows(pieces: int, window: int) -> list[int]:
    """Start offsets of the windows over `pieces` word pieces: half a window apart, the last one ending at the
    end."""
    if pieces <= window:
        return [0]
    step = max(1, window // 2)
    starts = list(range(0, pieces - window, step))
    return [*starts, pieces - window]


@dataclass(frozen=True)
class TextVectors:
    pieces: Any
    """(pieces x dimension) unit vectors, one per word piece of the text."""
    specials: Any
    """The unit vectors of every window's [CLS] and [SEP]: matched against, never averaged."""


def piece_embeddings(texts: list[str], name: str, layer: int | None, batch_size: int = 16) -> list[TextVectors]:
    """The vectors of every word piece of each text, from the model `name`'s `layer` (None: its last)."""
    import torch

    encoder = _encoder(name, layer)
    ids = [encoder.tokenizer.encode(text.strip(), add_special_tokens=False, verbose=False) for text in texts]
    jobs = [(t, start) for t, pieces in enumerate(ids) for start in _windows(len(pieces), encoder.window)]
    jobs.sort(key=lambda job: min(encoder.window, len(ids[job[0]]) - job[1]))  # alike lengths batched: less padding
    dimension = encoder.model.config.hidden_size
    out = [torch.zeros(len(pieces), dimension) for pieces in ids]
    margin = [torch.full((len(pieces),), -1) for pieces in ids]
    specials: list[list[Any]] = [[] for _ in ids]
    with torch.no_grad():
        for first in range(0, len(jobs), batch_size):
            batch = jobs[first:first + batch_size]
            rows = [[encoder.tokenizer.cls_token_id, *ids[t][start:start + encoder.window],
                     encoder.tokenizer.sep_token_id] for t, start in batch]
            longest = max(len(row) for row in rows)
            input_ids = torch.tensor([row + [encoder.tokenizer.pad_token_id] * (longest - len(row)) for row in rows])
            mask = torch.tensor([[1] * len(row) + [0] * (longest - len(row)) for row in rows])
            hidden = encoder.model(input_ids, attention_mask=mask, output_hidden_states=True).hidden_states
            states = hidden[encoder.layer]
            for row, (t, start) in enumerate(batch):
                count = len(rows[row]) - 2
                positions = torch.arange(count)
                edge = torch.minimum(positions, count - 1 - positions)  # distance from the window's nearer edge
                better = edge > margin[t][start:start + count]
                out[t][start:start + count][better] = states[row, 1:1 + count][better]
                margin[t][start:start + count][better] = edge[better]
                specials[t].append(states[row, [0, count + 1]])
    unit = torch.nn.functional.normalize
    return [TextVectors(unit(vectors, dim=-1) if len(vectors) else vectors, unit(torch.cat(ends), dim=-1))
            for vectors, ends in zip(out, specials, strict=True)]


def score(candidate: TextVectors, reference: TextVectors) -> tuple[float, float, float]:
    """BERTScore (precision, recall, F1) of one candidate against one reference (eq. 4.2-4.4); 0 when either
    has no word piece."""
    import torch

    if not len(candidate.pieces) or not len(reference.pieces):
        return 0.0, 0.0, 0.0
    precision = float((candidate.pieces @ torch.cat([reference.pieces, reference.specials]).T)
                      .max(dim=1).values.mean())
    recall = float((reference.pieces @ torch.cat([candidate.pieces, candidate.specials]).T).max(dim=1).values.mean())
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
