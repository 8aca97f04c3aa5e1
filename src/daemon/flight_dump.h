// A directory of flight recordings: `grove status --dump DIR` writes one file
// per daemon there (daemon-<vpid>.flight), `grove sim --replay DIR` reads
// them all back. docs/simulator.md, "Flight recordings".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "grpcomm/flight_record.h"

namespace grove {

std::string flight_file_name(Vpid vpid);

// Writes each daemon's recording (empty ones are skipped); returns how many
// files were written.
Result<std::size_t> write_flight_dump(const std::string& dir, const std::map<Vpid, Bytes>& files);

// Every daemon-*.flight in dir, decoded; refuses the whole directory, naming
// the file, if one is not a whole recording.
Result<std::vector<FlightRecording>> read_flight_dump(const std::string& dir);

}  // namespace grove
