#include "os/buffered_stream.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <cstdlib>

namespace grove {

namespace {

// A copy of the callback runs: it may destroy the stream (and the box).
void run(std::function<void()> callback) {
  if (callback) callback();
}

void on_read(bufferevent*, void* arg) {
  run(static_cast<BufferedStream::Callbacks*>(arg)->readable);
}

void on_write(bufferevent* bev, void* arg) {
  // libevent calls this when the output drops to its low watermark, 0.
  if (evbuffer_get_length(bufferevent_get_output(bev)) != 0) return;
  run(static_cast<BufferedStream::Callbacks*>(arg)->drained);
}

void on_event(bufferevent*, short events, void* arg) {
  if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
    run(static_cast<BufferedStream::Callbacks*>(arg)->closed);
  }
}

}  // namespace

BufferedStream::BufferedStream(event_base* base, Fd connection, Callbacks callbacks)
    : callbacks_(std::make_unique<Callbacks>(std::move(callbacks))),
      bev_(bufferevent_socket_new(base, connection.release(), BEV_OPT_CLOSE_ON_FREE)) {
  bufferevent_setcb(bev_.get(), &on_read, &on_write, &on_event, callbacks_.get());
}

void BufferedStream::enable_read() {
  bufferevent_enable(bev_.get(), EV_READ);
}

void BufferedStream::disable_read() {
  bufferevent_disable(bev_.get(), EV_READ);
}

std::optional<std::string> BufferedStream::read_line() {
  size_t length = 0;
  char* line = evbuffer_readln(bufferevent_get_input(bev_.get()), &length, EVBUFFER_EOL_LF);
  if (line == nullptr) return std::nullopt;
  std::string text(line, length);
  std::free(line);
  return text;
}

std::size_t BufferedStream::input_size() const {
  return evbuffer_get_length(bufferevent_get_input(bev_.get()));
}

std::size_t BufferedStream::discard_input() {
  evbuffer* input = bufferevent_get_input(bev_.get());
  const std::size_t held = evbuffer_get_length(input);
  evbuffer_drain(input, held);
  return held;
}

void BufferedStream::write(std::string_view bytes) {
  bufferevent_write(bev_.get(), bytes.data(), bytes.size());
}

std::size_t BufferedStream::queued() const {
  return evbuffer_get_length(bufferevent_get_output(bev_.get()));
}

}  // namespace grove
