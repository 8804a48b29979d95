"""The built-in benchmark: a deterministic generator of fictional papers and questions in the release format.

Every name is invented from syllables, so no model has seen these facts: the answer
fact of an item is written only into its gold paper(s); depth-2 gold papers are cited
only by their bridge; the three distractors come the paper's way (one stated by the
seed, one by a sibling reference, one invented). The output is the four JSON Lines
files of the release format (docs/data.md), so the one loader serves this and the real release.

`generate` writes one; `PRESETS` are its sizes. Its modules: `generator` (the benchmark in memory, in one fixed
order of draws), `papers` (the universe and its citation graph), `questions` (an item's fact, question and
options), `text` (a paper's sections), `labels` (the recall labels), `vocabulary` (the words it is written in),
`sizes` (presets, the too-small-pool refusal), `pool` (the least pool that builds), `writing` (the files on disk).
"""

from sandbox.synth.generator import GENERATOR_VERSION
from sandbox.synth.labels import DELIBERATE_DEFECTS
from sandbox.synth.sizes import PRESETS, NotEnoughPapers, Preset
from sandbox.synth.writing import generate

__all__ = ["DELIBERATE_DEFECTS", "GENERATOR_VERSION", "PRESETS", "NotEnoughPapers", "Preset", "generate"]
