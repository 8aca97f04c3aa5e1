// Owning handles for libevent objects: a unique_ptr with the matching free
// function as its deleter. libevent's types and free functions are only
// declared here (as <event2/...> declares them), so a header can hold one
// (os/timer.h, os/io_watch.h) without bringing libevent to its users.
#pragma once

#include <memory>

struct event;
struct event_base;
struct bufferevent;
struct evconnlistener;

extern "C" {
void event_base_free(struct event_base*);
void event_free(struct event*);
void bufferevent_free(struct bufferevent*);
void evconnlistener_free(struct evconnlistener*);
}

namespace grove {

struct EventBaseDeleter {
  void operator()(event_base* base) const { event_base_free(base); }
};
struct EventDeleter {
  void operator()(event* ev) const { event_free(ev); }  // also removes it if pending
};
struct BufferEventDeleter {
  void operator()(bufferevent* bev) const { bufferevent_free(bev); }
};
struct ListenerDeleter {
  void operator()(evconnlistener* listener) const { evconnlistener_free(listener); }
};

using EventBasePtr = std::unique_ptr<event_base, EventBaseDeleter>;
using EventPtr = std::unique_ptr<event, EventDeleter>;
using BufferEventPtr = std::unique_ptr<bufferevent, BufferEventDeleter>;
using ListenerPtr = std::unique_ptr<evconnlistener, ListenerDeleter>;

}  // namespace grove
