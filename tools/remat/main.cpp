//===- main.cpp - The remat command-line tool -------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

int main(int argc, char **argv) { return 0; }
