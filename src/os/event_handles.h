// The drivers' header for libevent (rml/transport, daemon/daemon_runtime):
// the owning handles (os/event_ptr.h), Fd (os/fd.h) and libevent's own
// declarations, which the drivers call directly. Every other layer includes
// os/fd.h, os/timer.h, os/io_watch.h, ... instead, and never <event2/...>.
#pragma once

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "os/event_ptr.h"
#include "os/fd.h"
