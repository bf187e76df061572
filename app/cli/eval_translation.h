// `transformer-studio eval` on an encoder–decoder translation model folder (app/cli/eval_translation.cpp).
#pragma once

#include "app/cli/args.h"
#include "core/model/model.h"

#include <string>

namespace ts::cli {

/// Options eval accepts only for translation models (added to the decoder-only ones).
inline const char* const kTranslationEvalUsage =
    "       transformer-studio eval --model DIR --pairs TEST.tsv [--train TRAIN.tsv] [--beam N] [--alignments FILE]\n"
    "         [--limit N] [--examples N] [--length-penalty A] [--json report.json] [--hyps DIR]\n"
    "         [--loss-curve curve.svg]\n"
    "  Translation quality of an encoder-decoder model (DIR has translation.json), per direction: held-out\n"
    "  cross-entropy of the references, sacreBLEU-compatible chrF (chrF2, char 6-grams) and BLEU (tok zh for Chinese\n"
    "  output, 13a for English) of greedy search and of beam search with --beam N (default 4; 1 = greedy only), and\n"
    "  with --train the translation-memory baseline (the training translation of the most similar training source by\n"
    "  character n-gram TF-IDF cosine). --alignments (assets/corpus/ibm1_align.py output) adds the cross-attention\n"
    "  alignment hit rate per decoder layer and head. --limit takes the first N pairs; --examples N (default 20)\n"
    "  held-out examples go to the JSON report; --hyps DIR writes every system's output and the references, one\n"
    "  line per pair (DIR/en-zh.greedy.txt, .beam, .retrieval, .ref), for re-scoring with other tools.\n"
    "  --loss-curve draws DIR/train_log.jsonl (train loss label-smoothed, held-out loss plain).\n";

/// Runs the translation evaluation of `m` (loaded from model_dir, encoder-decoder) on an already parsed command line
/// (--pairs required). Throws std::invalid_argument / std::runtime_error with a one-line message on bad input.
int run_translation_eval(const Args& args, const std::string& model_dir, const Model& m);

}  // namespace ts::cli
