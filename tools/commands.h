// Subcommands of the `etrt` command line tool.
#pragma once

int run_plugins_command(int argc, char** argv);
int run_run_command(int argc, char** argv);
int run_inspect_command(int argc, char** argv);
int run_generate_command(int argc, char** argv);  // generate_command.cpp
