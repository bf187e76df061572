/* llama.cpp itself as the reference for GGUF files, through its C API (libllama from npm, see
 * tests/reference/llama_cpp_reference.sh, which builds and runs this at test set-up).
 *
 *   llama_cpp_reference LIBDIR logits MODEL.gguf OUT ID...
 *       Every position's logits for the token ids, one llama_decode of the whole sequence with an F32 KV cache,
 *       flash attention off, one thread. OUT: int32 n_tokens, int32 n_vocab, then n_tokens x n_vocab float32.
 *   llama_cpp_reference LIBDIR embeddings MODEL.gguf OUT ID...
 *       An encoder-only model (BERT): every position's final hidden state (pooling none), one llama_decode.
 *       OUT: int32 n_tokens, int32 n_embd, then n_tokens x n_embd float32.
 *   llama_cpp_reference LIBDIR seq2seq MODEL.gguf OUT N_SRC SRC_ID... TGT_ID...
 *       An encoder-decoder (T5): llama_encode of the N_SRC source ids, then one llama_decode of the target ids
 *       (teacher forcing, the decoder start token included); OUT as for logits, one row per target position.
 *   llama_cpp_reference LIBDIR tokenize MODEL.gguf TEXTS OUT
 *       llama_tokenize on each text of TEXTS (uint32 count, then per text uint32 byte length and the bytes),
 *       parse_special off; OUT gets two JSON arrays per text, one line each: with add_special, then without.
 *       Only the vocabulary is loaded (vocab_only), so a tokenizer-only GGUF works.
 *   llama_cpp_reference LIBDIR bench MODEL T THREADS REPEATS [flash]
 *       Times llama_decode of T tokens (logits of the last one only, as generation needs) REPEATS times on a fresh KV
 *       cache each time and prints the fastest and the median in ms (tests/bench/gguf_bench.sh). With "flash",
 *       llama.cpp's flash attention is on (F32 KV cache either way).
 * Exits non-zero with one line on stderr when anything fails. */
#include "ggml-backend.h"
#include "llama.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char* what) {
    fprintf(stderr, "llama_cpp_reference: %s\n", what);
    exit(1);
}

static void quiet(enum ggml_log_level level, const char* text, void* user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static struct llama_context* reference_context(struct llama_model* model, int n, int embeddings) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(n < 64 ? 64 : n);
    cp.n_batch = cp.n_ubatch = cp.n_ctx;
    cp.n_threads = cp.n_threads_batch = 1;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    if (embeddings) {
        cp.embeddings = true;
        cp.pooling_type = LLAMA_POOLING_TYPE_NONE;
    }
    struct llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) die("cannot create a context");
    return ctx;
}

static struct llama_batch batch_of(int n, char** id_args) {
    struct llama_batch batch = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; ++i) {
        batch.token[i] = atoi(id_args[i]);
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = n;
    return batch;
}

static void write_rows(const char* out_path, int n, int width, const float* (*row)(struct llama_context*, int32_t),
                       struct llama_context* ctx) {
    FILE* out = fopen(out_path, "wb");
    if (!out) die("cannot write the output");
    const int32_t header[2] = {n, width};
    fwrite(header, sizeof header, 1, out);
    for (int i = 0; i < n; ++i) {
        const float* r = row(ctx, i);
        if (!r) die("no output row");
        fwrite(r, sizeof(float), (size_t)width, out);
    }
    fclose(out);
}

static const float* logits_row(struct llama_context* ctx, int32_t i) { return llama_get_logits_ith(ctx, i); }
static const float* embeddings_row(struct llama_context* ctx, int32_t i) { return llama_get_embeddings_ith(ctx, i); }

static int logits(const char* model_path, const char* out_path, int n, char** id_args) {
    struct llama_model* model = llama_model_load_from_file(model_path, llama_model_default_params());
    if (!model) die("cannot load the model");
    struct llama_context* ctx = reference_context(model, n, 0);
    struct llama_batch batch = batch_of(n, id_args);
    if (llama_decode(ctx, batch) != 0) die("llama_decode failed");
    write_rows(out_path, n, llama_vocab_n_tokens(llama_model_get_vocab(model)), logits_row, ctx);
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

static int embeddings(const char* model_path, const char* out_path, int n, char** id_args) {
    struct llama_model* model = llama_model_load_from_file(model_path, llama_model_default_params());
    if (!model) die("cannot load the model");
    struct llama_context* ctx = reference_context(model, n, 1);
    struct llama_batch batch = batch_of(n, id_args);
    if (llama_decode(ctx, batch) != 0) die("llama_decode failed");
    write_rows(out_path, n, llama_model_n_embd(model), embeddings_row, ctx);
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

static int seq2seq(const char* model_path, const char* out_path, int n_src, int n, char** id_args) {
    if (n_src <= 0 || n_src >= n) die("seq2seq: N_SRC must leave at least one target id");
    struct llama_model* model = llama_model_load_from_file(model_path, llama_model_default_params());
    if (!model) die("cannot load the model");
    if (!llama_model_has_encoder(model)) die("seq2seq: the model has no encoder");
    struct llama_context* ctx = reference_context(model, n, 0);
    struct llama_batch src = batch_of(n_src, id_args);
    if (llama_encode(ctx, src) != 0) die("llama_encode failed");
    struct llama_batch tgt = batch_of(n - n_src, id_args + n_src);
    if (llama_decode(ctx, tgt) != 0) die("llama_decode failed");
    write_rows(out_path, n - n_src, llama_vocab_n_tokens(llama_model_get_vocab(model)), logits_row, ctx);
    llama_batch_free(src);
    llama_batch_free(tgt);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

static void write_ids(FILE* out, const llama_token* ids, int n) {
    fputc('[', out);
    for (int i = 0; i < n; ++i) fprintf(out, i ? ",%d" : "%d", ids[i]);
    fputs("]\n", out);
}

static int tokenize(const char* model_path, const char* texts_path, const char* out_path) {
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model* model = llama_model_load_from_file(model_path, mp);
    if (!model) die("cannot load the vocabulary");
    const struct llama_vocab* vocab = llama_model_get_vocab(model);
    FILE* in = fopen(texts_path, "rb");
    FILE* out = fopen(out_path, "w");
    if (!in || !out) die("cannot open the texts or the output");
    uint32_t count = 0;
    if (fread(&count, 4, 1, in) != 1) die("truncated texts");
    for (uint32_t t = 0; t < count; ++t) {
        uint32_t len = 0;
        if (fread(&len, 4, 1, in) != 1) die("truncated texts");
        char* text = malloc(len + 1);
        if (!text || fread(text, 1, len, in) != len) die("truncated texts");
        const int cap = (int)len * 2 + 16;
        llama_token* ids = malloc(sizeof(llama_token) * (size_t)cap);
        for (int special = 1; special >= 0; --special) {
            const int n = llama_tokenize(vocab, text, (int32_t)len, ids, cap, special, false);
            if (n < 0) die("llama_tokenize: buffer too small");
            write_ids(out, ids, n);
        }
        free(ids);
        free(text);
    }
    fclose(in);
    fclose(out);
    llama_model_free(model);
    return 0;
}

static int cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static int bench(const char* model_path, int n, int threads, int repeats, int flash) {
    struct llama_model_params mp = llama_model_default_params();
    struct llama_model* model = llama_model_load_from_file(model_path, mp);
    if (!model) die("cannot load the model");
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = cp.n_batch = cp.n_ubatch = (uint32_t)n;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = flash ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    struct llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) die("cannot create a context");
    struct llama_batch batch = llama_batch_init(n, 0, 1);
    double* ms = malloc(sizeof(double) * (size_t)(repeats + 1));
    for (int r = 0; r <= repeats; ++r) {  /* the first run warms up */
        llama_memory_clear(llama_get_memory(ctx), true);
        for (int i = 0; i < n; ++i) {
            batch.token[i] = (i * 7919 + 13) % n_vocab;
            batch.pos[i] = i;
            batch.n_seq_id[i] = 1;
            batch.seq_id[i][0] = 0;
            batch.logits[i] = i == n - 1;
        }
        batch.n_tokens = n;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (llama_decode(ctx, batch) != 0) die("llama_decode failed");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms[r] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    }
    qsort(ms + 1, (size_t)repeats, sizeof(double), cmp_double);
    printf("llama.cpp %s T=%d threads=%d flash=%s: min %.1f ms, median %.1f ms\n", model_path, n, threads,
           flash ? "on" : "off", ms[1], ms[1 + repeats / 2]);
    free(ms);
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 5) die("usage: llama_cpp_reference LIBDIR logits MODEL OUT ID... | LIBDIR tokenize MODEL TEXTS OUT");
    llama_log_set(quiet, NULL);
    ggml_backend_load_all_from_path(argv[1]);
    llama_backend_init();
    if (strcmp(argv[2], "logits") == 0) return logits(argv[3], argv[4], argc - 5, argv + 5);
    if (strcmp(argv[2], "embeddings") == 0) return embeddings(argv[3], argv[4], argc - 5, argv + 5);
    if (strcmp(argv[2], "seq2seq") == 0 && argc > 6)
        return seq2seq(argv[3], argv[4], atoi(argv[5]), argc - 6, argv + 6);
    if (strcmp(argv[2], "tokenize") == 0 && argc == 6) return tokenize(argv[3], argv[4], argv[5]);
    if (strcmp(argv[2], "bench") == 0 && (argc == 7 || (argc == 8 && strcmp(argv[7], "flash") == 0)))
        return bench(argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), argc == 8);
    die("unknown mode");
    return 1;
}
