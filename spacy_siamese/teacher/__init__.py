"""The teacher: a sentence-transformers model that labels pairs for a student (AugSBERT), with
the extra `spacy-siamese[teacher]` (torch); the students it teaches load and run without torch.

- `train`: fine-tune a teacher (a cross-encoder or a bi-encoder) on labelled pairs (`teacher-train`).
- `models`: load a teacher; its vectors and pair scores, cached on disk (`evaluate --teacher`).
- `pairs`: silver pairs of a collection's texts labelled by a teacher (`teacher-pairs`).
- `loss`: `spacy-siamese.TeacherScores.v1`, a student's loss on the teacher's in-batch cosines,
  and the table of the teacher's vectors it reads (`teacher-pairs --vectors-output`).
"""

from .loss import TeacherScoresLoss, make_teacher_scores  # registers spacy-siamese.TeacherScores.v1

__all__ = ["TeacherScoresLoss", "make_teacher_scores"]
