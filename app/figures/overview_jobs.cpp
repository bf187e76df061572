// Long texts' attention overviews off the UI thread (app/figures/overview_jobs.h).
#include "app/figures/overview_jobs.h"

#include "app/figures/figures.h"

namespace ts::figures {

OverviewJobs::OverviewJobs() = default;

OverviewJobs::~OverviewJobs() {
    {
        std::lock_guard lk(m_mutex);
        m_stop = true;
        m_queue.clear();
    }
    m_cv.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void OverviewJobs::set_on_done(std::function<void()> fn) {
    std::lock_guard lk(m_mutex);
    m_on_done = std::move(fn);
}

bool OverviewJobs::ready(const std::shared_ptr<const Snapshot>& s, AttnSource source, int layer, int head,
                         bool selected) {
    if (!s || !s->trace || !attention_overview_pooled(*s, layer, source)) return true;
    const Key key{s->trace->attention(attention_prefix(*s, source, layer)).get(), head, selected};
    std::lock_guard lk(m_mutex);
    if (s->id != m_snap_id) {  // a new forward: the old one's heads are no longer wanted
        m_snap_id = s->id;
        m_queue.clear();
        m_queued.clear();
        m_done.clear();
    }
    // A head done as the selected one has its probabilities' overview too.
    if (m_done.count(key) || (!selected && m_done.count(Key{std::get<0>(key), head, true}))) return true;
    if (m_queued.insert(key).second) {
        // Started with the first job, not with the object: the app's threads are started after it blocks SIGTERM
        // for them (a thread started earlier would take the signal and end the process without saving its state).
        if (!m_thread.joinable()) m_thread = std::thread([this] { run(); });
        Job j{s, source, layer, head, key};
        if (selected) m_queue.push_front(std::move(j));
        else m_queue.push_back(std::move(j));
        m_cv.notify_one();
    } else if (selected) {  // already queued: move it to the front
        for (auto it = m_queue.begin(); it != m_queue.end(); ++it)
            if (it->key == key) {
                Job j = std::move(*it);
                m_queue.erase(it);
                m_queue.push_front(std::move(j));
                break;
            }
    }
    return false;
}

bool OverviewJobs::busy() const {
    std::lock_guard lk(m_mutex);
    return m_running || !m_queue.empty();
}

void OverviewJobs::run() {
    std::unique_lock lk(m_mutex);
    for (;;) {
        m_cv.wait(lk, [&] { return m_stop || !m_queue.empty(); });
        if (m_stop) return;
        Job j = std::move(m_queue.front());
        m_queue.pop_front();
        m_running = true;
        const uint64_t id = j.snap->id;
        lk.unlock();
        warm_attention_overview(*j.snap, j.layer, j.head, j.source, std::get<2>(j.key));
        j.snap.reset();  // the snapshot may be the last copy: freed here, not under the lock
        lk.lock();
        m_running = false;
        if (id == m_snap_id) {
            m_queued.erase(j.key);
            m_done.insert(j.key);
        }
        if (m_on_done) {
            const auto fn = m_on_done;
            lk.unlock();
            fn();
            lk.lock();
        }
    }
}

}  // namespace ts::figures
