"""What both front ends print: the cells, labels and wording of every view (pure text, no Textual, no stdout)."""
