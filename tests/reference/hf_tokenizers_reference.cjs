// Reference encodings from @huggingface/tokenizers (tokenizers.js, the pure-JS port of Hugging Face's tokenizers)
// for the C++ parity tests. Run at test set-up by fetch_npm_testdata.sh:
//   node hf_tokenizers_reference.cjs PACKAGE_DIR TOKENIZER_JSON TOKENIZER_CONFIG_JSON TEXTS_JSON OUT_JSON
// TEXTS_JSON is a JSON array of strings; OUT_JSON gets [{text, ids, ids_no_special, decoded}] in the same order.
const fs = require("fs");
const path = require("path");
const [pkgDir, tokPath, cfgPath, textsPath, outPath] = process.argv.slice(2);
const { Tokenizer } = require(path.join(pkgDir, "dist", "tokenizers.cjs"));
const tok = new Tokenizer(JSON.parse(fs.readFileSync(tokPath, "utf8")),
                          cfgPath && fs.existsSync(cfgPath) ? JSON.parse(fs.readFileSync(cfgPath, "utf8")) : {});
const texts = JSON.parse(fs.readFileSync(textsPath, "utf8"));
const out = texts.map((text) => {
  const ids = tok.encode(text).ids.map(Number);
  const ids_no_special = tok.encode(text, { add_special_tokens: false }).ids.map(Number);
  return { text, ids, ids_no_special, decoded: ids_no_special.length ? tok.decode(ids_no_special) : "" };
});
fs.writeFileSync(outPath, JSON.stringify(out, null, 0));
