// The training lab (app/session/training_lab.h, issue #33): a lab step is a CLI trainer step bit for bit, settings
// round-trip, the curriculum and probe measure what they say, the log reads back, and the background run pauses,
// resumes and stops.
#include "app/figures/figures.h"
#include "app/session/training_lab.h"
#include "app/session/worker.h"
#include "core/interp/head_detectors.h"
#include "core/kernels/threads.h"
#include "core/model/model.h"
#include "core/trace/trace.h"
#include "core/train/trainer.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>
#include <cstring>
#include <thread>

namespace {

namespace fs = std::filesystem;
using ts::studio::LabCorpus;
using ts::studio::LabRun;
using ts::studio::LabSettings;
using ts::studio::TrainingLab;

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("ts_lab_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    return d;
}

LabSettings tiny_settings(int steps) {
    LabSettings s;
    s.preset = "attn-only-2l";
    s.train.steps = steps;
    s.train.batch = 2;
    s.train.seq_len = 16;
    s.train.eval_every = 2;
    s.train.eval_batches = 1;
    s.train.snapshot_every = 3;
    s.train.warmup = 2;
    s.probe_every = 2;
    return s;
}

struct ThreadsGuard {
    int saved = ts::compute_threads();
    explicit ThreadsGuard(int n) { ts::set_compute_threads(n); }
    ~ThreadsGuard() { ts::set_compute_threads(saved); }
};

TEST(TrainingLab, LabStepsEqualTheTrainersRunBitForBit) {
    ThreadsGuard one(1);
    for (const char* preset : {"attn-only-2l", "llama-4l"}) {
        LabSettings s = tiny_settings(5);
        s.preset = preset;
        s.train.dropout = 0.1f;  // dropout masks come from (seed, step): both runs must draw the same
        s.train.z_loss = 1e-3f;
        const fs::path lab_dir = temp_dir(std::string("eq_lab_") + preset);
        LabRun run(s, lab_dir);
        while (!run.done()) run.step();

        // What `train --tokens` does with the same config, tokens and options.
        const ts::ModelConfig c = ts::studio::lab_model_config(s);
        auto data = std::make_shared<const ts::train::TokenDataset>(LabRun::corpus_tokens(s), c.vocab_size,
                                                                    s.train.seq_len, s.train.val_fraction);
        const fs::path cli_dir = temp_dir(std::string("eq_cli_") + preset);
        ts::train::Trainer t(c, ts::init_weights(c, s.train.seed), data, s.train, cli_dir);
        t.run();
        ASSERT_EQ(t.step(), run.current_step());
        for (const auto& [name, w] : t.model().params()) {
            const auto& mine = run.trainer().model().params().at(name);
            ASSERT_EQ(w.data.size(), mine.data.size()) << name;
            EXPECT_EQ(0, std::memcmp(w.data.data(), mine.data.data(), w.data.size() * sizeof(float)))
                << preset << ": " << name << " differs after " << t.step() << " steps";
        }
        // Its step-5 snapshot is the same model folder the trainer's --snapshot-every writes.
        EXPECT_TRUE(fs::exists(lab_dir / "snapshots" / "step-00000005" / "model.safetensors"));
        EXPECT_TRUE(fs::exists(cli_dir / "snapshots" / "step-00000003" / "model.safetensors"));
        fs::remove_all(lab_dir);
        fs::remove_all(cli_dir);
    }
}

TEST(TrainingLab, HistoryRecordsStepsEvaluationsProbesAndSnapshots) {
    const fs::path dir = temp_dir("history");
    LabRun run(tiny_settings(6), dir);
    while (!run.done()) run.step();
    const auto& h = run.history();
    ASSERT_EQ(h.steps.size(), 6u);
    EXPECT_EQ(h.steps.front().step, 0);
    EXPECT_EQ(h.steps.back().step, 5);
    for (const auto& st : h.steps) {
        EXPECT_TRUE(std::isfinite(st.loss));
        ASSERT_EQ(st.layer_grad_norms.size(), 2u);
        // The global norm covers the layers' parameters and the embeddings, head and final norm besides.
        EXPECT_GE(st.grad_norm * st.grad_norm + 1e-9,
                  st.layer_grad_norms[0] * st.layer_grad_norms[0] + st.layer_grad_norms[1] * st.layer_grad_norms[1]);
        EXPECT_GE(st.max_logsumexp, st.max_logit);  // log Σ e^z ≥ max z
        EXPECT_LE(st.max_logsumexp, st.max_logit + std::log(256.0f) + 1e-4f);
    }
    std::vector<int64_t> val_steps, probe_steps, snap_steps;
    for (const auto& [step, v] : h.val) val_steps.push_back(step);
    for (const auto& p : h.probes) probe_steps.push_back(p.step);
    for (const auto& [step, path] : h.snapshots) snap_steps.push_back(step);
    EXPECT_EQ(val_steps, (std::vector<int64_t>{0, 2, 4, 6}));
    EXPECT_EQ(probe_steps, (std::vector<int64_t>{0, 2, 4, 6}));
    EXPECT_EQ(snap_steps, (std::vector<int64_t>{0, 3, 6}));
    // The folder reads back the same record (render --lab-run).
    const ts::studio::LabHistory back = ts::studio::load_lab_history(dir);
    ASSERT_EQ(back.steps.size(), h.steps.size());
    EXPECT_FLOAT_EQ(back.steps[3].loss, h.steps[3].loss);
    EXPECT_NEAR(back.steps[3].layer_grad_norms[1], h.steps[3].layer_grad_norms[1], 1e-9);
    ASSERT_EQ(back.val.size(), h.val.size());
    EXPECT_DOUBLE_EQ(back.val[2].second, h.val[2].second);
    ASSERT_EQ(back.probes.size(), h.probes.size());
    EXPECT_FLOAT_EQ(back.probes[1].induction(1, 2), h.probes[1].induction(1, 2));
    EXPECT_FLOAT_EQ(back.probes[2].entropy(0, 3), h.probes[2].entropy(0, 3));
    ASSERT_EQ(back.snapshots.size(), 3u);
    EXPECT_EQ(back.snapshots[1].first, 3);
    EXPECT_NEAR(back.uniform_loss, std::log(26.0), 1e-12);
    // The figures: six, with one point per step on the loss and a marker where asked.
    const auto figs = ts::figures::lab_figures(back, 3);
    ASSERT_EQ(figs.size(), ts::figures::lab_figure_names().size());
    EXPECT_EQ(figs[0].series[0].y.size(), 6u);
    EXPECT_EQ(figs[4].series.size(), 8u);  // 2 layers × 4 heads
    EXPECT_DOUBLE_EQ(figs[5].ref_lines.back().pos, 3.0);
    fs::remove_all(dir);
}

TEST(TrainingLab, TwoRunsSideBySideAndTheirDifference) {
    ts::studio::LabHistory a, b;
    a.total_steps = 10;
    b.total_steps = 20;
    a.val = {{0, 5.0}, {5, 4.0}, {10, 3.0}};
    b.val = {{0, 5.0}, {10, 2.0}, {20, 1.0}};  // at step 5, interpolated: 3.5
    for (int s = 0; s < 3; ++s) {
        ts::train::StepStats st;
        st.step = s;
        st.grad_norm = 1.0 + s;
        st.max_logit = float(s);
        a.steps.push_back(st);
    }
    ts::studio::LabProbe p;
    p.step = 10;
    p.induction = ts::MatrixRM::Constant(2, 4, 0.6f);
    b.probes.push_back(p);
    const auto figs = ts::figures::lab_compare_figures(a, b, "pre-norm", "post-norm");
    ASSERT_EQ(figs.size(), ts::figures::lab_compare_figure_names().size());
    ASSERT_EQ(figs[0].series.size(), 2u);
    EXPECT_EQ(figs[0].series[0].name, "A: pre-norm");
    EXPECT_TRUE(figs[0].series[1].dashed);
    // B − A at A's evaluation steps: 0, 3.5 − 4 and 2 − 3.
    const auto& d = figs[1].series.at(0);
    ASSERT_EQ(d.y.size(), 3u);
    EXPECT_DOUBLE_EQ(d.y[0], 0.0);
    EXPECT_DOUBLE_EQ(d.y[1], -0.5);
    EXPECT_DOUBLE_EQ(d.y[2], -1.0);
    EXPECT_NE(figs[1].note.find("B − A = -1"), std::string::npos) << figs[1].note;
    EXPECT_EQ(figs[3].series[0].y, (std::vector<double>{0, 1, 2}));  // the largest logit per step
    EXPECT_NE(figs[4].note.find("B: ≥ 0.5 first at step 10"), std::string::npos) << figs[4].note;
    EXPECT_DOUBLE_EQ(figs[0].x.max, 20.0);
}

TEST(TrainingLab, AFreshRunInAnOldFolderDropsItsSnapshots) {
    const fs::path dir = temp_dir("fresh");
    {
        LabRun run(tiny_settings(6), dir);
        while (!run.done()) run.step();
    }
    ASSERT_TRUE(fs::exists(dir / "snapshots" / "step-00000006"));
    LabRun again(tiny_settings(2), dir);
    EXPECT_FALSE(fs::exists(dir / "snapshots" / "step-00000006"));
    EXPECT_EQ(ts::studio::load_lab_history(dir).snapshots.size(), 1u);  // step 0 of the new run
    fs::remove_all(dir);
}

TEST(TrainingLab, SettingsRoundTripAndErrorsNameTheField) {
    LabSettings s;
    s.preset = "vanilla-4l";
    s.corpus = LabCorpus::TextFile;
    s.corpus_file = "/tmp/x.txt";
    s.norm_placement = "pre";
    s.norm = "rmsnorm";
    s.attention = "mqa";
    s.position = "sinusoidal";
    s.qk_norm = true;
    s.repeat.copies = 4;
    s.train.lr = 0.02f;
    s.train.z_loss = 1e-4f;
    s.probe_every = 7;
    const nlohmann::json j = s;
    const LabSettings back = j.get<LabSettings>();
    EXPECT_EQ(nlohmann::json(back), j);
    EXPECT_EQ(back.repeat.copies, 4);
    EXPECT_FLOAT_EQ(back.train.lr, 0.02f);

    const ts::ModelConfig c = ts::studio::lab_model_config(back);
    EXPECT_EQ(c.norm, ts::NormKind::RMSNorm);
    EXPECT_EQ(c.norm_placement, ts::NormPlacement::Pre);
    EXPECT_TRUE(c.final_norm);
    EXPECT_EQ(c.n_kv_heads, 1);
    EXPECT_EQ(c.position, ts::PositionKind::Sinusoidal);
    EXPECT_TRUE(c.qk_norm);
    EXPECT_EQ(c.vocab_size, 256);

    const auto error_of = [](const nlohmann::json& bad) {
        try {
            (void)ts::studio::lab_model_config(bad.get<LabSettings>());
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(error_of({{"preset", "gpt-99l"}}).find("unknown lab preset 'gpt-99l'"), std::string::npos);
    EXPECT_NE(error_of({{"attention", "moe"}}).find("attention must be mha, gqa or mqa"), std::string::npos);
    EXPECT_NE(error_of({{"corpus", "wiki"}}).find("unknown lab corpus 'wiki'"), std::string::npos);
    EXPECT_NE(error_of({{"qk_norm", "yes"}}).find("'qk_norm' has the wrong type"), std::string::npos);
    EXPECT_NE(error_of({{"train", {{"seq_len", 100000000}}}}).find("train.seq_len must be in [2, 4096]"),
              std::string::npos);
    EXPECT_NE(error_of({{"train", {{"batch", 0}}}}).find("train.batch must be in [1, 1024], got 0"), std::string::npos);
    EXPECT_THROW((void)ts::studio::repeated_random_stream(100, 1, {26, 8, 4, 2, 0, 0}), std::invalid_argument);
    LabSettings no_file;
    no_file.corpus = LabCorpus::TextFile;
    EXPECT_THROW(LabRun(no_file, temp_dir("nofile")), std::invalid_argument);
}

// The zh–en pairs as a byte-level corpus: the pairs file's lines, tab and UTF-8 bytes as they are; a missing file
// says how to build one.
TEST(TrainingLab, PairsCorpusIsTheBytesOfItsLines) {
    EXPECT_EQ(ts::studio::lab_corpus_from_string("zh-en"), LabCorpus::ZhEnPairs);
    EXPECT_STREQ(ts::studio::to_string(LabCorpus::ZhEnPairs), "zh-en");
    const fs::path dir = temp_dir("pairs");
    fs::create_directories(dir);
    { std::ofstream(dir / "pairs.tsv") << "Open the file\t打开文件\nSave\t保存\n"; }
    LabSettings s;
    s.corpus = LabCorpus::ZhEnPairs;
    s.corpus_file = (dir / "pairs.tsv").string();
    const std::vector<int32_t> ids = LabRun::corpus_tokens(s);
    std::string got;
    for (int32_t id : ids) got.push_back(char(id));
    EXPECT_NE(got.find("Open the file\t打开文件"), std::string::npos) << got;
    EXPECT_NE(got.find("Save\t保存"), std::string::npos) << got;
    for (int32_t id : ids) EXPECT_TRUE(id >= 0 && id < 256);
    s.corpus_file = (dir / "missing.tsv").string();
    try {
        (void)LabRun::corpus_tokens(s);
        ADD_FAILURE() << "a missing pairs file was read";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("missing.tsv does not exist"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
}

TEST(TrainingLab, RepeatedRandomStreamWritesEachSpanAgain) {
    // Two copies, no gap, independent letters: the stream is blocks s s, so cutting it at block boundaries works
    // only if every block really repeats; check it by walking the blocks with the lengths the stream implies.
    ts::studio::RepeatCurriculum c;
    c.copies = 2;
    c.max_gap = 0;
    c.markov_order = 0;
    c.min_span = c.max_span = 10;  // a fixed length makes the block boundaries known
    const auto ids = ts::studio::repeated_random_stream(2000, 5, c);
    ASSERT_EQ(ids.size(), 2000u);
    for (size_t b = 0; b + 20 <= ids.size(); b += 20)
        for (size_t i = 0; i < 10; ++i) ASSERT_EQ(ids[b + i], ids[b + 10 + i]) << "block at " << b;
    std::set<int> letters(ids.begin(), ids.end());
    EXPECT_EQ(letters.size(), 26u);
    EXPECT_EQ(*letters.begin(), 'a');
    EXPECT_EQ(*letters.rbegin(), 'z');
    EXPECT_EQ(ids, ts::studio::repeated_random_stream(2000, 5, c));  // a pure function of the seed
    EXPECT_NE(ids, ts::studio::repeated_random_stream(2000, 6, c));
    // 52 letters: upper case too.
    c.alphabet = 52;
    const auto big = ts::studio::repeated_random_stream(5000, 5, c);
    EXPECT_EQ(std::set<int>(big.begin(), big.end()).size(), 52u);
    // The second-order chain: after a pair, its 3 favoured successors take ≈ 0.8 + 0.2 · 3/26 of the letters.
    c.alphabet = 26;
    c.markov_order = 2;
    c.copies = 1;
    c.min_span = c.max_span = 400;
    const auto chain = ts::studio::repeated_random_stream(400 * 200, 9, c);
    std::map<std::pair<int, int>, std::map<int, int>> next;
    for (size_t i = 2; i < chain.size(); ++i)
        if (i % 400 >= 2) ++next[{chain[i - 2], chain[i - 1]}][chain[i]];
    int64_t top3 = 0, all = 0;
    for (const auto& [pair, counts] : next) {
        std::vector<int> v;
        for (const auto& [t, n] : counts) v.push_back(n), all += n;
        std::sort(v.rbegin(), v.rend());
        for (size_t k = 0; k < std::min<size_t>(3, v.size()); ++k) top3 += v[k];
    }
    EXPECT_NEAR(double(top3) / double(all), 0.8 + 0.2 * 3.0 / 26.0, 0.04);
}

TEST(TrainingLab, ProbeEntropyOfUniformAttentionIsTheMeanLogOfTheKeyCount) {
    // Zero query and key projections: every score is 0, so query i attends uniformly to its i + 1 keys and its
    // entropy is ln(i + 1); the probe averages queries 1..T−1.
    LabSettings s;
    s.position = "learned";  // RoPE would rotate zero vectors into zero vectors too; learned keeps it simple
    const ts::ModelConfig c = ts::studio::lab_model_config(s);
    ts::WeightMap w = ts::init_weights(c, 3);
    for (auto& [name, t] : w)
        if (name.find(".attn.wq") != std::string::npos || name.find(".attn.wk") != std::string::npos ||
            name.find(".attn.bq") != std::string::npos || name.find(".attn.bk") != std::string::npos)
            std::fill(t.data.begin(), t.data.end(), 0.0f);
    const auto& ids = ts::studio::lab_probe_ids();
    ASSERT_EQ(ids.size(), 48u);
    const ts::studio::LabProbe p = ts::studio::probe_heads(c, w, ids, 7);
    double expected = 0;
    for (int i = 1; i < 48; ++i) expected += std::log(double(i + 1));
    expected /= 47;
    EXPECT_EQ(p.step, 7);
    ASSERT_EQ(p.entropy.rows(), 2);
    ASSERT_EQ(p.entropy.cols(), 4);
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h) EXPECT_NEAR(p.entropy(l, h), expected, 1e-4) << l << "," << h;
    // Uniform attention puts 1/(i+1) on every key of query i, so a score is Σ_(i,j) P[i,j]/(i+1) over the 48 rows'
    // total attention (TransformerLens "mul").
    for (const auto kind : {ts::interp::HeadKind::Induction, ts::interp::HeadKind::PreviousToken}) {
        const ts::MatrixRM P = ts::interp::detection_pattern(kind, ids);
        double sum = 0;
        for (int i = 0; i < 48; ++i)
            for (int j = 0; j <= i; ++j) sum += P(i, j) / (i + 1);
        const ts::MatrixRM& got = kind == ts::interp::HeadKind::Induction ? p.induction : p.prev_token;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h) EXPECT_NEAR(got(l, h), sum / 48, 1e-4) << l << "," << h;
    }
}

TEST(TrainingLab, AttentionOnlyModelsHaveNoFfnAndTheirParameterCountMatchesTheirWeights) {
    const ts::ModelConfig c = ts::studio::lab_model_config(LabSettings{});
    ASSERT_EQ(c.d_ff, 0);
    int64_t n = 0;
    for (const auto& [name, shape] : ts::expected_weights(c)) {
        EXPECT_EQ(name.find("ffn"), std::string::npos) << name;
        int64_t k = 1;
        for (auto d : shape) k *= d;
        n += k;
    }
    EXPECT_EQ(c.parameter_count(), n);
    const ts::Model m(c, ts::init_weights(c, 1));
    ts::ForwardOptions opt;
    opt.capture = ts::CaptureFilter::all();
    const auto r = ts::forward(m, {'a', 'b', 'c'}, opt);
    EXPECT_NE(r.trace->find("dec.1.resid_ffn"), nullptr);
    EXPECT_EQ(r.trace->find("dec.1.ffn.post_act"), nullptr);
    // The layer's output is its attention output: resid_ffn == resid_attn.
    EXPECT_EQ(r.trace->at("dec.1.resid_ffn").data, r.trace->at("dec.1.resid_attn").data);
}

TEST(TrainingLab, BackgroundRunPausesResumesAndStops) {
    TrainingLab lab;
    const fs::path dir = temp_dir("thread");
    LabSettings s = tiny_settings(100000);
    s.train.snapshot_every = 0;
    s.probe_every = 0;
    s.train.eval_every = 1000;
    ASSERT_TRUE(lab.start(s, dir));
    const auto wait_for = [&](auto pred) {
        for (int i = 0; i < 2000 && !pred(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return pred();
    };
    ASSERT_TRUE(wait_for([&] { return lab.history() && lab.history()->steps.size() >= 3; }));
    lab.pause();
    ASSERT_TRUE(wait_for([&] { return lab.status() == TrainingLab::Status::Paused; }));
    const size_t at_pause = lab.history()->steps.size();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(lab.history()->steps.size(), at_pause);
    lab.resume();
    ASSERT_TRUE(wait_for([&] { return lab.history()->steps.size() > at_pause + 2; }));
    lab.stop();
    EXPECT_EQ(lab.status(), TrainingLab::Status::Stopped);
    EXPECT_FALSE(lab.active());
    fs::remove_all(dir);

    // A run that finishes says so; a failing one carries its message.
    LabSettings small = tiny_settings(4);
    ASSERT_TRUE(lab.start(small, dir));
    ASSERT_TRUE(wait_for([&] { return lab.status() == TrainingLab::Status::Done; }));
    EXPECT_EQ(lab.history()->steps.size(), 4u);
    LabSettings bad = tiny_settings(4);
    bad.preset = "nope";
    ASSERT_TRUE(lab.start(bad, dir));
    ASSERT_TRUE(wait_for([&] { return lab.status() == TrainingLab::Status::Failed; }));
    EXPECT_NE(lab.error().find("unknown lab preset"), std::string::npos);
    fs::remove_all(dir);
}

}  // namespace

// The runs recorded for the lessons (assets/lab-runs) are found by name, read back whole, and are what the lab
// trains: the first steps of induction-2l, trained again here on one thread, give its recorded losses.
TEST(TrainingLab, RecordedRunsAreFoundByNameAndTrainAgainToTheirLog) {
    const auto runs = ts::studio::bundled_lab_runs();
    std::set<std::string> names;
    for (const auto& r : runs) names.insert(r.filename().string());
    for (const char* want : {"induction-2l", "pre-norm-no-warm-up", "post-norm-no-warm-up", "no-z-loss", "z-loss"}) {
        ASSERT_TRUE(names.count(want)) << want;
        const fs::path dir = ts::studio::resolve_lab_run(want);
        ASSERT_TRUE(fs::is_directory(dir)) << dir;
        const auto h = ts::studio::load_lab_history(dir);
        EXPECT_EQ(int(h.steps.size()), h.total_steps) << want;  // the whole run was recorded
        EXPECT_FALSE(h.val.empty()) << want;
    }
    // A folder is itself; an unknown name stays as given, so loading it names what is missing.
    const fs::path here = temp_dir("resolve");
    fs::create_directories(here);
    EXPECT_EQ(ts::studio::resolve_lab_run(here.string()), here);
    EXPECT_EQ(ts::studio::resolve_lab_run("no-such-run"), fs::path("no-such-run"));
    EXPECT_THROW((void)ts::studio::load_lab_history(ts::studio::resolve_lab_run("no-such-run")), std::runtime_error);
    fs::remove_all(here);

    const fs::path rec = ts::studio::resolve_lab_run("induction-2l");
    const auto recorded = ts::studio::load_lab_history(rec);
    LabSettings s = ts::studio::load_lab_settings(rec / "settings.json");
    s.train.steps = 3;  // the schedule depends on the total: compare the losses of the first steps only
    s.train.snapshot_every = 0;
    s.probe_every = 0;
    ThreadsGuard one(1);
    const fs::path out = temp_dir("again");
    LabRun run(s, out);
    // Step 0's loss does not depend on the schedule; step 1's does only through step 0's learning rate, which
    // warm-up makes the same for 3 or 2000 total steps.
    for (int i = 0; i < 2; ++i) run.step();
    ASSERT_GE(run.history().steps.size(), 2u);
    for (size_t i = 0; i < 2; ++i)
        EXPECT_NEAR(run.history().steps[i].loss, recorded.steps[i].loss, 1e-5 * recorded.steps[i].loss) << "step " << i;
    fs::remove_all(out);
}

// The A/B view's attention: each side is the head's attention on the probe in that run's snapshot (the same as a
// forward of the snapshot folder), and the third figure is exactly B − A.
TEST(TrainingLab, AttentionOfTwoRunsAndTheirDifferenceAreTheSnapshots) {
    const fs::path da = temp_dir("att_a"), db = temp_dir("att_b");
    LabSettings sa = tiny_settings(6), sb = tiny_settings(6);
    sb.train.seed = 2;
    for (auto [s, d] : {std::pair{&sa, &da}, std::pair{&sb, &db}}) {
        LabRun run(*s, *d);
        while (!run.done()) run.step();
    }
    const auto ha = ts::studio::load_lab_history(da), hb = ts::studio::load_lab_history(db);
    const auto a = ts::studio::probe_attention(ha, 4, 1, 2), b = ts::studio::probe_attention(hb, 4, 1, 2);
    EXPECT_EQ(a.step, 3);  // the newest snapshot at or before step 4
    const int T = int(ts::studio::lab_probe_ids().size());
    ASSERT_EQ(a.T, T);
    ASSERT_EQ(a.probs.size(), size_t(T) * size_t(T));
    // Side A is a forward of A's step-3 snapshot folder.
    const ts::studio::LoadedModel lm = ts::studio::load_model_folder(ha.snapshots[1].second);
    ts::ForwardOptions fo;
    fo.capture = ts::CaptureFilter::prefixes({"dec.1.attn.probs"});
    const auto r = ts::forward(*lm.model, ts::studio::lab_probe_ids(), fo);
    const auto& ref = r.trace->at("dec.1.attn.probs").data;
    for (size_t k = 0; k < a.probs.size(); ++k) ASSERT_FLOAT_EQ(a.probs[k], ref[2 * a.probs.size() + k]) << k;
    const auto figs = ts::figures::lab_compare_attention_figures(a, b, "seed 1", "seed 2", 1, 2);
    ASSERT_EQ(figs.size(), 3u);
    ASSERT_TRUE(figs[2].heatmap.has_value());
    ASSERT_EQ(figs[2].heatmap->values.size(), a.probs.size());
    float largest = 0;
    for (size_t k = 0; k < a.probs.size(); ++k) {
        EXPECT_FLOAT_EQ(figs[2].heatmap->values[k], b.probs[k] - a.probs[k]);
        largest = std::max(largest, std::abs(figs[2].heatmap->values[k]));
    }
    EXPECT_GT(largest, 0.0f);  // two seeds: two different models
    EXPECT_EQ(figs[2].heatmap->cmap, ts::plot::Colormap::Diverging);
    EXPECT_THROW((void)ts::studio::probe_attention(ha, 4, 5, 0), std::invalid_argument);
    fs::remove_all(da);
    fs::remove_all(db);
}
