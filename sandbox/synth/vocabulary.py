"""The words the built-in benchmark is written in: the syllables its invented names are drawn from, the nouns,
fields, aspects and mechanisms of its fictional methods, the filler sentences of its papers, the values of an item's
labels; and `word`, a fresh invented word."""

from __future__ import annotations

import random

SYLLABLES = (
    "ka",
    "ren",
    "vo",
    "lith",
    "mar",
    "zen",
    "tor",
    "qui",
    "bel",
    "sha",
    "dro",
    "fen",
    "gal",
    "hiv",
    "jor",
    "kel",
    "lun",
    "mis",
    "nor",
    "pel",
    "ras",
    "sol",
    "tav",
    "ulm",
    "vex",
    "wyn",
    "yor",
    "zan",
    "cor",
    "dex",
    "ith",
    "oph",
    "ar",
    "en",
    "is",
    "ul",
    "ba",
    "ne",
    "ri",
    "to",
)
NOUNS = (
    "Attention",
    "Pooling",
    "Decomposition",
    "Retrieval",
    "Planning",
    "Tokenizer",
    "Encoder",
    "Distillation",
    "Alignment",
    "Sampling",
    "Routing",
    "Memory",
    "Calibration",
    "Parsing",
    "Ranking",
    "Augmentation",
)
FIELDS = (
    "long-context reasoning",
    "dense retrieval",
    "vision-language grounding",
    "speech recognition",
    "graph learning",
    "instruction tuning",
    "multilingual transfer",
    "code generation",
    "recommendation",
    "question answering",
    "image segmentation",
    "reinforcement learning from feedback",
)
ASPECTS = (
    "normalisation scheme",
    "training objective",
    "scoring function",
    "update rule",
    "sampling schedule",
    "memory layout",
    "regularisation term",
    "curriculum",
    "negative mining strategy",
    "gating mechanism",
    "initialisation",
    "stopping criterion",
)
MECHANISMS = (
    "computes {a} over {b}",
    "anneals {a} across {b}",
    "weights {a} by {b}",
    "clips {a} against {b}",
    "averages {a} within {b}",
    "ranks {a} relative to {b}",
)
VENUES = ("NeurIPS", "ICML", "ICLR", "ACL", "EMNLP", "NAACL", "CVPR", "ECCV", "SIGIR")
REASONING = ("GROUND", "METHOD", "MOTIVE", "RESULT")
SKILLS = ("retrieve", "reason", "contrast", "assess", "synthesize", "justify")
TIERS = ("gold", "gold", "silver", "bronze")
FIRST = (
    "Ada",
    "Bram",
    "Chen",
    "Dara",
    "Elif",
    "Femi",
    "Goran",
    "Hana",
    "Ivo",
    "Jun",
    "Kira",
    "Lior",
    "Mara",
    "Nils",
    "Oona",
    "Priya",
    "Quinn",
    "Rafa",
    "Sana",
    "Tomas",
    "Uma",
    "Vera",
    "Wen",
    "Xiu",
    "Yara",
    "Zeno",
)
FILLER = (
    "We evaluate the approach on {n} benchmarks and observe consistent gains over strong baselines.",
    "Prior work on {field} has largely relied on hand-tuned heuristics that do not transfer across domains.",
    "Our analysis suggests that the improvements are not explained by model size alone.",
    "The {name} framework is trained end to end with a standard cross-entropy loss unless stated otherwise.",
    "Ablations indicate that each component contributes to the final performance.",
    "We release code and configuration files to support reproducibility.",
    "Results are averaged over {n} random seeds and reported with standard deviations.",
    "A key challenge in {field} is the mismatch between training and deployment conditions.",
    "We discuss limitations, including the cost of annotation and sensitivity to hyperparameters.",
    "The experimental protocol follows common practice in {field}.",
    "Qualitative examples show that the model attends to the relevant evidence.",
    "We further study the behaviour of {name} when the input length grows.",
    "Training converges within {n} epochs on a single accelerator.",
    "Compared with earlier systems, {name} requires fewer labelled examples.",
    "Error analysis reveals that most failures stem from ambiguous inputs.",
)


WORD_TRIES = 200  # draws of two or three syllables before a word takes four (their ~65,000 words run out)


def word(rng: random.Random, used: set[str]) -> str:
    """A fresh invented word, never used before in this benchmark. Two or three syllables while those last (a
    pool of a few thousand papers and items uses them up, and the loop never ended); then four."""
    tries = 0
    while True:
        tries += 1
        syllables = rng.choice((2, 3, 3)) if tries <= WORD_TRIES else 4
        w = "".join(rng.choice(SYLLABLES) for _ in range(syllables))
        if w not in used and len(w) >= 5:
            used.add(w)
            return w
