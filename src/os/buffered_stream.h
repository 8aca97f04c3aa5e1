// A connected stream socket with an input and an output buffer, run by the
// loop (the control socket's clients): reads fill the input as bytes come,
// write() queues and the loop sends as the peer takes them. The callbacks
// say when input came, when the output has drained, and when the peer is
// gone; any of them may destroy the stream.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "os/event_ptr.h"
#include "os/fd.h"

namespace grove {

class BufferedStream {
 public:
  struct Callbacks {
    std::function<void()> readable;  // new bytes in the input
    std::function<void()> drained;   // a write left the output empty
    std::function<void()> closed;    // end of stream, or an error reading or writing
  };

  BufferedStream() = default;
  // Owns `connection` (closed with the stream). Reading starts disabled.
  BufferedStream(event_base* base, Fd connection, Callbacks callbacks);
  BufferedStream(BufferedStream&&) noexcept = default;
  BufferedStream& operator=(BufferedStream&&) noexcept = default;

  void enable_read();
  void disable_read();
  // The input's first line, without its '\n'; nothing until one is complete.
  std::optional<std::string> read_line();
  std::size_t input_size() const;
  // Throws the input away; returns how many bytes it held.
  std::size_t discard_input();
  // Queues `bytes`; the loop sends them.
  void write(std::string_view bytes);
  // Bytes queued and not yet taken by the peer.
  std::size_t queued() const;

 private:
  // Boxed: libevent holds its address, which must not move with the stream.
  std::unique_ptr<Callbacks> callbacks_;
  BufferEventPtr bev_;  // after callbacks_: freed first
};

}  // namespace grove
