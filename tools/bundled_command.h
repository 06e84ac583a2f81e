// `etrt run` on a bundled program (.bpte), and `--verify`.
#pragma once

namespace etrt::tools {

// When the run command's arguments name a bundled program or ask for --verify, runs the command here
// (every test case, or those of --method_name / --testset_idx, checked at --bundleio_rtol/--bundleio_atol),
// sets *exit_code (0 verified, 1 a case failed, 2 a usage or load error) and returns true. Returns false,
// touching nothing, for every other run (and for --help).
bool run_bundled_program_command(int argc, char** argv, int* exit_code);

}  // namespace etrt::tools
