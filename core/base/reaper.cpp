#include "reaper.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace tw {

namespace {

class Reaper {
public:
    Reaper()
        : m_thread([this](std::stop_token stop) { run(stop); })
    {
    }
    ~Reaper()
    {
        {
            std::lock_guard lock(m_mutex); // the waiting thread sees the request (no lost wake-up)
            m_thread.request_stop();
        }
        m_wake.notify_all();
        m_thread.join();
    }

    void push(std::shared_ptr<const void> object)
    {
        {
            std::lock_guard lock(m_mutex);
            m_queue.push_back(std::move(object));
            ++m_pushed;
        }
        m_wake.notify_one();
    }

    void drain()
    {
        std::unique_lock lock(m_mutex);
        const unsigned long long target = m_pushed;
        m_done.wait(lock, [&] { return m_released >= target; });
    }

private:
    void run(std::stop_token stop)
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return stop.stop_requested() || !m_queue.empty(); });
            if (m_queue.empty() && stop.stop_requested())
                return;
            std::deque<std::shared_ptr<const void>> batch;
            batch.swap(m_queue);
            lock.unlock();
            const auto n = batch.size();
            batch.clear(); // the frees happen here, outside the lock
            lock.lock();
            m_released += n;
            m_done.notify_all();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::deque<std::shared_ptr<const void>> m_queue;
    unsigned long long m_pushed = 0, m_released = 0;
    std::jthread m_thread;
};

// Constructed on first use; after its destruction (process exit) releases happen inline.
std::atomic<bool> g_alive{false};

Reaper& reaper()
{
    static struct Holder {
        Reaper r;
        Holder() { g_alive = true; }
        ~Holder() { g_alive = false; }
    } holder;
    return holder.r;
}

} // namespace

void releaseLater(std::shared_ptr<const void> object)
{
    if (!object)
        return;
    Reaper& r = reaper();
    if (!g_alive)
        return; // exiting: `object` goes out of scope here
    r.push(std::move(object));
}

void drainReleases()
{
    if (g_alive)
        reaper().drain();
}

} // namespace tw
