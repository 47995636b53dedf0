"""Write ``cyp_guides_schema.csv``: a made-up file in the layout of the public CYP-GUIDES clinical CSV.

No value comes from the trial: the file only has the trial file's layout (its 43 columns in order, UTF-8 with a
byte-order mark, the diagnosis quoted where it holds a comma, a blank ``Assignment`` for patients who were not
randomised, codes of the same kinds), so that the reader, the case study, the analysis and the validation harness
run on it in every checkout; the real file lives outside the repository (``../shared/data``). Every value follows
from the row number i = 1..150 by the rules below, so the expected counts can be read off them:

* Assignment: G for i <= 96, S for 97 <= i <= 144, blank for 145..150 -> 144 randomised, 96 G : 48 S, 6 dropped;
* GENDER: M when i is a multiple of 3, else F -> 48 male among the randomised;
* RACE/ETHNICITY: W for odd i, else B, L or O/U -> 72 nonwhite among the randomised;
* Diagnosis: a bipolar diagnosis when i is a multiple of 5, else an MDD one -> 144 - 28 = 116 mdd;
* AGE 18 + (7 i mod 72) in [18, 89]; LOS 24 + (37 i mod 700) hours (>= 1).

Run ``python tests/reference/cyp_guides_schema.py`` to rewrite the file.
"""

import csv
from pathlib import Path

HERE = Path(__file__).resolve().parent
LETTERS = ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S", "T", "U",
           "V", "W", "X", "Y", "Z", "AA", "AB", "AC", "AD"]
COLUMNS = (["ID", "GENDER", "AGE", "RACE/ETHNICITY", "Diagnosis", "MD", "Assignment", "EMR", "LOS", "RAR"] + LETTERS
           + ["# Psychotropic Medications", "# Administrations", "Therapeutic Guidances"])
MDD = ["MDD, Recurrent, Unspecified", "Major Depressive Disorder, Single Episode", "MDD, Recurrent, Severe"]


def row(i: int) -> list:
    assignment = "G" if i <= 96 else "S" if i <= 144 else ""
    race = "W" if i % 2 else ["B", "L", "O/U"][(i // 2) % 3]
    diagnosis = "Bipolar I Disorder, Current Episode Depressed" if i % 5 == 0 else MDD[i % 3]
    drugs = [(i * (k + 3)) % 4 if (i + k) % 7 == 0 else 0 for k in range(len(LETTERS))]
    return ([i, "M" if i % 3 == 0 else "F", 18 + (7 * i) % 72, race, diagnosis, "ALGIT"[i % 5], assignment,
             "CE"[i % 2], 24 + (37 * i) % 700, i % 2] + drugs
            + [sum(1 for d in drugs if d), sum(drugs), ["EG", "CT", "TL", ""][i % 4]])


def main() -> None:
    with open(HERE / "cyp_guides_schema.csv", "w", encoding="utf-8-sig", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(COLUMNS)
        for i in range(1, 151):
            out.writerow(row(i))


if __name__ == "__main__":
    main()
