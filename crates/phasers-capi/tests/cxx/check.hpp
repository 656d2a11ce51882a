// Helpers shared by the C++ test programs: a failed check prints where and why and exits with
// status 1; a watchdog turns a hang into a failure that names the section.
#ifndef PHASERS_TEST_CHECK_HPP
#define PHASERS_TEST_CHECK_HPP

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "phasers.hpp"

#define CHECK(condition)                                                                          \
    do {                                                                                          \
        if (!(condition)) {                                                                       \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);   \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

// `statement` must throw phasers::error with code `expected`, and what() must contain `text`.
#define EXPECT_THROWS(expected, text, statement)                                                  \
    do {                                                                                          \
        bool expect_threw_ = false;                                                               \
        try {                                                                                     \
            statement;                                                                            \
        } catch (const phasers::error &expect_error_) {                                           \
            expect_threw_ = true;                                                                 \
            if (expect_error_.code() != (expected) ||                                             \
                std::strstr(expect_error_.what(), (text)) == nullptr) {                           \
                std::fprintf(stderr, "%s:%d: %s threw code %d (%s), \"%s\"; expected %d, \"%s\"\n", \
                             __FILE__, __LINE__, #statement, expect_error_.code(),                \
                             expect_error_.description(), expect_error_.what(), (int)(expected),  \
                             (text));                                                             \
                std::exit(1);                                                                     \
            }                                                                                     \
        }                                                                                         \
        if (!expect_threw_) {                                                                     \
            std::fprintf(stderr, "%s:%d: %s did not throw\n", __FILE__, __LINE__, #statement);   \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

// Exits the process with status 3, naming `section`, unless destroyed within `limit`.
class Watchdog {
public:
    Watchdog(const char *section, std::chrono::seconds limit)
        : thread_([this, section, limit] {
              std::unique_lock<std::mutex> lock(mutex_);
              if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
                  std::fprintf(stderr, "watchdog: %s hung for %lld s\n", section,
                               static_cast<long long>(limit.count()));
                  std::fflush(stderr);
                  std::_Exit(3);
              }
          }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    Watchdog(const Watchdog &) = delete;
    Watchdog &operator=(const Watchdog &) = delete;

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

#endif
