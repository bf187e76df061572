#!/usr/bin/env python3
"""Rebuilds the default models' English corpus from two Debian packages (the text itself is never committed).

  /usr/bin/python3 assets/corpus/build_corpus.py --out corpus/

Sources (see assets/corpus/SOURCES.md for their licences):
  * Jane Austen's six novels from r-cran-janeaustenr (public-domain text, MIT packaging). R is not needed:
    the package's data/Rdata.rdb is a sequence of blobs, each a 4-byte big-endian length followed by a zlib stream
    holding one R-serialized (XDR, format 3) character vector: one hard-wrapped line of a novel per element.
  * WordNet 3.0's example sentences from wordnet-base: the quoted examples after '| ' in each synset's gloss.
Output in --out: austen.txt (one paragraph per line), wordnet.txt (one sentence per line), corpus.txt (both, lines
shuffled with a fixed seed so a held-out tail is a fair sample) and stats.json.
Only the standard library is used; the .deb is fetched with `apt-get download` when not already extracted.
"""
import argparse
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import zlib

RDB = "usr/lib/R/site-library/janeaustenr/data/Rdata.rdb"
WORDNET_DIR = "/usr/share/wordnet"


def find_janeaustenr(work):
    """Returns the path of Rdata.rdb, downloading and unpacking the .deb into `work` when needed."""
    for root in ("/", work):
        p = os.path.join(root, RDB)
        if os.path.exists(p):
            return p
    os.makedirs(work, exist_ok=True)
    subprocess.run(["apt-get", "download", "r-cran-janeaustenr"], cwd=work, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    debs = [f for f in os.listdir(work) if f.startswith("r-cran-janeaustenr") and f.endswith(".deb")]
    if not debs:
        sys.exit("build_corpus: apt-get download r-cran-janeaustenr produced no .deb")
    subprocess.run(["dpkg-deb", "-x", os.path.join(work, debs[0]), work], check=True)
    return os.path.join(work, RDB)


def read_r_strings(blob):
    """Parses one R XDR serialization whose root is a character vector (STRSXP) -> list of str (NA -> None)."""
    if blob[:2] != b"X\n":
        raise ValueError("not an XDR R serialization")
    pos = 2
    version, = struct.unpack(">i", blob[pos:pos + 4]); pos += 4
    pos += 8  # writer R version, minimal reader version
    if version == 3:
        n, = struct.unpack(">i", blob[pos:pos + 4]); pos += 4 + n  # native encoding name
    flags, = struct.unpack(">i", blob[pos:pos + 4]); pos += 4
    if flags & 0xFF != 16:
        raise ValueError("root object is type %d, expected a character vector (16)" % (flags & 0xFF))
    count, = struct.unpack(">i", blob[pos:pos + 4]); pos += 4
    out = []
    for _ in range(count):
        flags, length = struct.unpack(">ii", blob[pos:pos + 8]); pos += 8
        if flags & 0xFF != 9:
            raise ValueError("element of type %d, expected CHARSXP (9)" % (flags & 0xFF))
        if length == -1:
            out.append(None)
            continue
        out.append(blob[pos:pos + length].decode("utf-8", errors="replace")); pos += length
    return out


def read_rdb_blobs(path):
    data = open(path, "rb").read()
    pos, blobs = 0, []
    while pos + 4 <= len(data):
        d = zlib.decompressobj()
        blobs.append(d.decompress(data[pos + 4:]))
        pos = len(data) - len(d.unused_data)
    return blobs


HEADING = re.compile(r"^(CHAPTER|Chapter|VOLUME|Volume)\b[\sIVXLC0-9.]*$|^[IVXLC]+$|^THE END$|^FINIS$")


def austen_paragraphs(lines):
    """Joins hard-wrapped lines into paragraphs, strips _italic_ underscores, drops chapter headings."""
    paras, cur = [], []
    for line in lines + [""]:
        line = (line or "").strip()
        if not line:
            if cur:
                p = " ".join(cur).replace("_", "")
                p = re.sub(r"\s+", " ", p).strip()
                if p and not HEADING.match(p):
                    paras.append(p)
                cur = []
            continue
        cur.append(line)
    return paras


def wordnet_examples():
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        path = os.path.join(WORDNET_DIR, "data." + pos)
        if not os.path.exists(path):
            sys.exit("build_corpus: %s missing (apt-get install wordnet-base, or bash .ci/deps.sh --corpus)" % path)
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  ") or "| " not in line:
                    continue  # licence header lines start with two spaces
                gloss = line.split("| ", 1)[1]
                for ex in re.findall(r'"([^"]{3,})"', gloss):
                    ex = ex.strip()
                    if ex:
                        out.append(ex[0].upper() + ex[1:])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "ts_corpus_src"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    rdb = find_janeaustenr(args.work)
    austen = []
    for blob in read_rdb_blobs(rdb):
        austen += austen_paragraphs(read_r_strings(blob))
    wn = wordnet_examples()

    def write(name, lines):
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    write("austen.txt", austen)
    write("wordnet.txt", wn)
    mixed = austen + wn
    random.Random(args.seed).shuffle(mixed)
    write("corpus.txt", mixed)
    stats = {"austen_paragraphs": len(austen), "austen_bytes": sum(len(p.encode()) + 1 for p in austen),
             "wordnet_sentences": len(wn), "wordnet_bytes": sum(len(s.encode()) + 1 for s in wn),
             "seed": args.seed}
    with open(os.path.join(args.out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=2)
    print(json.dumps(stats))


if __name__ == "__main__":
    main()
