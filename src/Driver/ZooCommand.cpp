//===- ZooCommand.cpp - remat zoo -------------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Verifier.h"
#include "remat/Support/Status.h"
#include "remat/Zoo/Zoo.h"

#include <fmt/format.h>

namespace remat::driver {
namespace {

const CommandSpec &zooSpec() {
  static const CommandSpec spec{
      .name = "zoo",
      .synopsis = "MODEL [--key=value ...] [-o OUT]",
      .description =
          "Prints the forward training graph of MODEL as text IR: a scalar "
          "loss as the first\noutput, the weights as params. Model options "
          "are written `--key=value`, or `--flag`\nfor `--flag=true`; the "
          "same options give the same graph, byte for byte.",
      .options = {{.name = "output",
                   .shortName = 'o',
                   .valueName = "OUT",
                   .help = "Writes to OUT instead of stdout."}},
      .acceptsExtraOptions = true};
  return spec;
}

void printModel(const ZooModelInfo &model, llvm::raw_ostream &os) {
  os << fmt::format("  {}\n      {}\n", model.name, model.summary);
  size_t width = 0;
  std::vector<std::string> lefts;
  for (const ZooOptionInfo &option : model.options) {
    lefts.push_back(fmt::format("--{}={}", option.name, option.defaultValue));
    width = std::max(width, lefts.back().size());
  }
  for (size_t i = 0; i < model.options.size(); ++i)
    os << fmt::format("      {:<{}}  {}\n", lefts[i], width,
                      model.options[i].help);
}

/// The usage, then every model (or only `onlyModel` when it names one) with
/// its options and their defaults.
void printZooHelp(llvm::StringRef onlyModel, llvm::raw_ostream &os) {
  const CommandSpec &spec = zooSpec();
  printUsage(spec, os);
  std::vector<ZooModelInfo> models = listZooModels();
  bool known = llvm::any_of(
      models, [&](const ZooModelInfo &m) { return m.name == onlyModel; });
  os << (known ? "\nmodel (options with their defaults):\n"
               : "\nmodels (options with their defaults):\n");
  for (const ZooModelInfo &model : models)
    if (!known || model.name == onlyModel)
      printModel(model, os);
}

absl::Status runZooCommand(const ParsedArgs &args, CommandContext &ctx) {
  const CommandSpec &spec = zooSpec();
  if (args.positional.empty()) {
    std::vector<std::string> names;
    for (const ZooModelInfo &model : listZooModels())
      names.push_back(model.name);
    return invalidArgument("'remat zoo' needs a MODEL argument (models: {})",
                           fmt::join(names, ", "));
  }
  REMAT_ASSIGN_OR_RETURN(std::string model,
                         singlePositional(spec, args, "MODEL"));
  ZooOptions options(args.extras.begin(), args.extras.end());
  REMAT_ASSIGN_OR_RETURN(auto graph, buildZooModel(model, options));
  // Generators promise verified graphs; a failure here is a generator bug,
  // reported rather than printed.
  REMAT_RETURN_IF_ERROR(verify(*graph));
  absl::Status written =
      writeOutput(args.get("output"), ctx.out,
                  [&](llvm::raw_ostream &os) { printGraph(*graph, os); });
  disposeGraph(std::move(graph), ctx);
  return written;
}

/// `remat zoo --help`, or `remat zoo MODEL --help` for one model.
void printZooCommandHelp(const ParsedArgs &args, llvm::raw_ostream &os) {
  printZooHelp(args.positional.empty() ? "" : args.positional.front(), os);
}

} // namespace

const Command kZooCommand{zooSpec, runZooCommand, printZooCommandHelp};

} // namespace remat::driver
