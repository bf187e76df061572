"""Tests of assets/corpus/read_lexicon.py (CC-CEDICT word pairs) and of the lexicon selection and everyday-set
reading in build_parallel.py, on hand-made entries; no network.

  /usr/bin/python3 -m unittest discover -s tests/corpus -p '*_test.py'     (ctest: corpus_build_parallel)
"""
import collections
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "assets", "corpus"))
import build_parallel as bp  # noqa: E402
import read_lexicon as rl  # noqa: E402


def entry(trad, simp, pinyin, senses):
    return [trad, simp, pinyin, senses, [], []]


class LexiconRules(unittest.TestCase):
    def test_parse_all_js(self):
        text = 'export default {"all":[["天氣","天气","tian1 qi4","weather",[],[]]],"variantLookup":[]}'
        self.assertEqual(rl.parse_all_js(text), [["天氣", "天气", "tian1 qi4", "weather", [], []]])
        with self.assertRaises(ValueError):
            rl.parse_all_js('{"all": []}')
        with self.assertRaises(ValueError):
            rl.parse_all_js('export default {"other": 1}')

    def test_each_rule(self):
        removed = collections.Counter()
        pairs = rl.lexicon_pairs([
            entry("北京", "北京", "Bei3 jing1", "Beijing"),                      # name
            entry("3D打印", "3D打印", "san1 D da3 yin4", "3D printing"),         # script
            entry("銾", "汞", "gong3", "variant of 汞[gong3]"),                  # sense
            entry("柩", "柩", "jiu4", "(archaic) bier"),                         # sense
            entry("經辦", "经办", "jing1 ban4", "to handle; to deal with"),      # kept: "handle"
            entry("看", "看", "kan4", ["to see", "to look at", "to read"]),      # kept: "see" ("see" is no xref)
            entry("看", "看", "kan1", ["to look after"]),                        # duplicate: fewer senses
            entry("樹根", "树根", "shu4 gen1", "tree roots (of old trees)"),     # kept, note removed
            entry("詡", "诩", "xu3", ["to brag, boast, or show off widely", "popular"]),  # first sense too long
            entry("字", "字", "zi4", "character; CL:個|个[ge4]"),                # kept: "character"
        ], removed)
        self.assertEqual(pairs, [("handle", "经办"), ("see", "看"), ("tree roots", "树根"), ("popular", "诩"),
                                 ("character", "字")])
        self.assertEqual(removed, collections.Counter({"name": 1, "script": 1, "sense": 2, "duplicate": 1}))

    def test_selection_prefers_frequent_headwords_and_skips_corpus_keys(self):
        words = [("weather", "天气"), ("rare", "罕"), ("open file", "打开文件"), ("good", "好"), ("day", "天")]
        corpus_zh = ["今天天气很好", "天气", "好"]
        got = bp.select_lexicon(words, corpus_zh, taken_keys={"open file"}, limit=3)
        # 天 occurs 3 times, 天气 2, 好 2 (dictionary order among equals), 罕 never; "open file" is a corpus key.
        self.assertEqual(got, [("day", "天"), ("weather", "天气"), ("good", "好")])

    def test_everyday_set_keys(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "dev.tsv"), "w", encoding="utf-8") as f:
                f.write("The weather is nice today.\t今天天气很好。\nbroken line\n")
            with open(os.path.join(d, "test.tsv"), "w", encoding="utf-8") as f:
                f.write("We  go to Beijing tomorrow\t我们明天去北京。\n")
            keys, zh = bp.read_everyday(d)
        self.assertEqual(keys, {"the weather is nice today", "we go to beijing tomorrow"})
        self.assertEqual(zh, {"今天天气很好。", "我们明天去北京。"})

    def test_bundled_everyday_set_is_well_formed(self):
        for name in ("dev.tsv", "test.tsv"):
            with open(os.path.join(bp.EVERYDAY_DIR, name), encoding="utf-8") as f:
                lines = f.read().split("\n")
            self.assertEqual(lines[-1], "", name)
            rows = [l.split("\t") for l in lines[:-1]]
            self.assertGreaterEqual(len(rows), 75, name)
            for r in rows:
                self.assertEqual(len(r), 2, r)
                self.assertTrue(bp.CJK.search(r[1]) and r[0].strip(), r)
        keys, _ = bp.read_everyday()
        self.assertGreaterEqual(len(keys), 150)


if __name__ == "__main__":
    unittest.main()
