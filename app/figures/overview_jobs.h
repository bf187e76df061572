// The Attention panel's overviews of a long text, off the UI thread (#30). Above 256 queries or keys a head is drawn
// as a pooled overview (the largest weight of each block), and computing one reads the head's whole T × S matrix from
// the queries and keys: ~60 ms per head at 8k tokens, seconds for a model's every head. OverviewJobs computes them on
// a thread of its own, one head at a time, and keeps them in the attention block's cache (AttentionRows::
// pooled_cached), so the panel draws the heads that are ready and a placeholder for the rest instead of freezing.
// GL-free.
#pragma once

#include "app/session/knobs.h"
#include "app/session/worker.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

namespace ts::figures {

using namespace ts::studio;  // the session layer below: Snapshot, AttnSource (as figures.h)

class OverviewJobs {
public:
    OverviewJobs();  ///< no thread yet: it starts with the first head queued
    /// Stops after the head being computed (if any) and joins the thread.
    ~OverviewJobs();
    OverviewJobs(const OverviewJobs&) = delete;
    OverviewJobs& operator=(const OverviewJobs&) = delete;

    /// Runs on the job thread after each head (the app: glfwPostEmptyEvent, so the window redraws).
    void set_on_done(std::function<void()> fn);
    /// True when the figures of (layer, head) can be drawn without waiting: a short text (nothing pooled), no
    /// attention recorded for the layer, or its overview computed. Otherwise queues it (once) and returns false.
    /// `selected`: the head the big heatmap and the step view show — ahead of the others, with the step view's
    /// score overviews too. A snapshot with another id forgets the queue
    /// and what was done for the previous one. Call from one thread (the UI's).
    bool ready(const std::shared_ptr<const Snapshot>& s, AttnSource source, int layer, int head, bool selected = false);
    /// Heads queued or being computed.
    [[nodiscard]] bool busy() const;

private:
    using Key = std::tuple<const void*, int, bool>;  // (the layer's AttentionRows, head, selected)
    struct Job {
        std::shared_ptr<const Snapshot> snap;
        AttnSource source;
        int layer, head;
        Key key;
    };
    void run();

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Job> m_queue;
    std::set<Key> m_queued, m_done;  // of snapshot m_snap_id
    uint64_t m_snap_id = 0;
    bool m_running = false, m_stop = false;
    std::function<void()> m_on_done;
    std::thread m_thread;
};

}  // namespace ts::figures
