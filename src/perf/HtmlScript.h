// The script of the HTML report (html_report): it draws the page from the JSON data
// html_report embeds; kept apart from the data it reads.
#pragma once

namespace nkic::perf {

const char* html_report_script();

}  // namespace nkic::perf
