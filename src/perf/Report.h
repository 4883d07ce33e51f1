// A Profile written out: the engine timeline in the Chrome / Perfetto
// trace-event JSON format (one track per engine and DMA queue, one slice per
// instruction with its source line), and one self-contained HTML page with the
// timeline, the SBUF/PSUM occupancy and the time per source line.
#pragma once
#include <string>

#include "perf/Profile.h"

namespace nkic::perf {

// "pe", "act", "dve", "pool", then "dma0".."dma15" for the DMA queues; on more than
// one physical core, prefixed "core<c>.".
std::string track_name(const Profile& p, int track);

// The time slice `s` keeps its track busy: its duration, or for a steady-state stretch its
// repeat count times the busy time of the period it repeats (0 when that was not recorded).
double busy_within(const Profile& p, const Slice& s);

std::string trace_json(const Profile& p);
std::string html_report(const Profile& p);

// `s` as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

}  // namespace nkic::perf
