#!/usr/bin/env python3
"""Writes two small tokenizer.json files for the tokenizer parity tests (tests/tokenizer/data/):
  wordpiece_tokenizer.json  BERT-uncased pipeline: BertNormalizer, BertPreTokenizer, WordPiece, BertProcessing
  unigram_tokenizer.json    T5-style pipeline: Replace(" {2,}" -> " "), Metaspace, Unigram, </s> template
Their vocabularies are made from tests/tokenizer/data/parity_texts.json (whole words, split words, single
characters), deterministic, so encodings exercise greedy longest-match, Viterbi and unknown characters; the
reference ids come from tokenizers.js at test set-up (tests/reference/hf_tokenizers_reference.cjs).
Usage: python3 tests/reference/make_tokenizer_json_fixtures.py"""
import json, os, unicodedata, zlib

here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(here, "..", "tokenizer", "data")
texts = json.load(open(os.path.join(data, "parity_texts.json"), encoding="utf-8"))

def h(s):
    return zlib.crc32(s.encode("utf-8"))

def is_cjk(c):
    cp = ord(c)
    return 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x2FA1F

def bert_words(t):
    t = "".join(" " if c.isspace() else c for c in t if not unicodedata.category(c).startswith("C") or c in "\t\n\r")
    t = "".join(f" {c} " if is_cjk(c) else c for c in t)
    t = "".join(c for c in unicodedata.normalize("NFD", t) if unicodedata.category(c) != "Mn").lower()
    words = []
    for w in t.split():
        cur = ""
        for c in w:
            if unicodedata.category(c).startswith("P") or (c.isascii() and not c.isalnum()):
                if cur: words.append(cur)
                words.append(c); cur = ""
            else:
                cur += c
        if cur: words.append(cur)
    return words

def is_emoji(c):
    return ord(c) >= 0x1F000 or 0x2600 <= ord(c) <= 0x27BF

# --- WordPiece ---
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
seen = set(vocab)
def add(t):
    if t not in seen:
        seen.add(t); vocab.append(t)
words = sorted({w for t in texts for w in bert_words(t)})
for w in words:
    if len(w) >= 4 and h(w) % 3 == 0:
        add(w)
    elif len(w) >= 4 and h(w) % 3 == 1:
        add(w[: len(w) // 2]); add("##" + w[len(w) // 2:])
for w in words:
    for c in w:
        if not is_emoji(c):
            add(c); add("##" + c)
wordpiece = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True} for i, t in enumerate(vocab[:5])],
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": None, "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(vocab)}},
}

# --- Unigram ---
M = "\u2581"
pieces = {"<pad>": 0.0, "</s>": 0.0, "<unk>": 0.0}
def addp(p, score):
    if p and p not in pieces:
        pieces[p] = score
for t in texts:
    for w in t.split(" "):
        if not w: continue
        w = M + w
        for i in range(len(w)):
            for j in range(i + 1, min(len(w), i + 6) + 1):
                sub = w[i:j]
                if any(is_emoji(c) for c in sub): continue
                if len(sub) == 1 or h(sub) % 4 == 0:
                    addp(sub, -(2.0 + 8.0 / len(sub)) - (h(sub) % 1000) / 1000.0)
unigram = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True} for i, t in enumerate(["<pad>", "</s>", "<unk>"])],
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
    "pre_tokenizer": {"type": "Metaspace", "replacement": M, "prepend_scheme": "always", "split": True},
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                       "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                       "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
    "decoder": {"type": "Metaspace", "replacement": M, "prepend_scheme": "always", "split": True},
    "model": {"type": "Unigram", "unk_id": 2, "byte_fallback": False, "vocab": [[p, s] for p, s in pieces.items()]},
}
for name, obj in (("wordpiece_tokenizer.json", wordpiece), ("unigram_tokenizer.json", unigram)):
    with open(os.path.join(data, name), "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print(name, len(obj["model"]["vocab"]), "tokens")
