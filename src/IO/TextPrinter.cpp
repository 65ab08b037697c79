//===- TextPrinter.cpp - Writing the text IR ------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes the canonical form (docs/text-format.md) straight to a raw_ostream:
/// one line per op in schedule order, then outputs, then collections. Names and
/// strings that need no escaping are written in place; only the rare ones that
/// do go through Attribute::str(), which owns the escaping rules.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/TextFormat.h"

#include "Lexer.h"

#include <future>
#include <string>
#include <utility>

namespace remat {

static bool needsEscape(llvm::StringRef text) {
  for (char c : text)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
        c == 0x7f)
      return true;
  return false;
}

static void printQuoted(llvm::raw_ostream &os, llvm::StringRef text) {
  if (needsEscape(text))
    os << Attribute(text.str()).str();
  else
    os << '"' << text << '"';
}

/// `%name`, or `%"name"` when the name holds bytes a bare name cannot.
static void printSigilName(llvm::raw_ostream &os, char sigil,
                           llvm::StringRef name) {
  os << sigil;
  if (io::isBareName(name))
    os << name;
  else
    printQuoted(os, name);
}

static void printValue(llvm::raw_ostream &os, const Value *value) {
  printSigilName(os, '%', value->name());
}

/// An attribute or collection name: an identifier, or quoted.
static void printKey(llvm::raw_ostream &os, llvm::StringRef name) {
  if (io::isIdentifier(name))
    os << name;
  else
    printQuoted(os, name);
}

static void printType(llvm::raw_ostream &os, const Type &type) {
  os << dtypeName(type.dtype()) << '[';
  llvm::ArrayRef<int64_t> shape = type.shape();
  for (size_t i = 0, e = shape.size(); i < e; ++i) {
    if (i)
      os << ',';
    os << shape[i];
  }
  os << ']';
}

static void printAttr(llvm::raw_ostream &os, const Attribute &attr) {
  if (attr.is(AttrKind::Int))
    os << attr.asInt();
  else
    os << attr.str();
}

static void printClauses(llvm::raw_ostream &os, const Op &op) {
  if (!op.controlDeps().empty()) {
    os << " after(";
    bool first = true;
    for (const Op *dep : op.controlDeps()) {
      if (!first)
        os << ", ";
      first = false;
      if (dep->numResults() != 0)
        printValue(os, dep->result(0));
    }
    os << ')';
  }
  if (!op.region().empty()) {
    os << " region ";
    printQuoted(os, op.region());
  }
  if (!op.device().empty()) {
    os << " device ";
    printQuoted(os, op.device());
  }
}

static void printOp(llvm::raw_ostream &os, const Op &op) {
  os << "  ";
  if (op.hasFlag(OpFlagLeaf) && op.numResults() == 1) {
    os << op.kind() << ' ';
    printValue(os, op.result());
    os << " : ";
    printType(os, op.result()->type());
    printClauses(os, op);
    os << '\n';
    return;
  }
  for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
    if (i)
      os << ", ";
    printValue(os, op.result(i));
  }
  os << " = " << op.kind() << '(';
  for (unsigned i = 0, e = op.numOperands(); i < e; ++i) {
    if (i)
      os << ", ";
    printValue(os, op.operand(i));
  }
  os << ')';
  if (!op.attrs().empty()) {
    os << " {";
    bool first = true;
    for (const NamedAttr &attr : op.attrs()) {
      if (!first)
        os << ", ";
      first = false;
      printKey(os, attr.name);
      os << " = ";
      printAttr(os, attr.value);
    }
    os << '}';
  }
  if (op.numResults() != 0) {
    os << " : ";
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      if (i)
        os << ", ";
      printType(os, op.result(i)->type());
    }
  }
  printClauses(os, op);
  os << '\n';
}

/// Ops per batch of the two-thread printer; a graph of fewer than two
/// batches is printed by one thread.
constexpr size_t kPrintBatchOps = 16384;

/// Writes one line per op, in schedule order. A large graph's lines are
/// formatted two batches at a time: this thread writes the first straight
/// to `os` while a second formats the next into a string, written after it.
/// Both only read the graph, and the text is what one thread would write.
static void printOps(const Graph &graph, llvm::raw_ostream &os) {
  if (graph.numOps() < 2 * kPrintBatchOps) {
    for (const Op &op : graph.ops())
      printOp(os, op);
    return;
  }
  auto next = graph.ops().begin(), end = graph.ops().end();
  auto takeBatch = [&] {
    auto first = next;
    for (size_t n = 0; n < kPrintBatchOps && next != end; ++n)
      ++next;
    return std::make_pair(first, next);
  };
  while (next != end) {
    auto first = takeBatch();
    auto second = takeBatch();
    // Run here, when `get` asks, where no thread can be started.
    std::future<std::string> secondText = std::async(
        std::launch::async | std::launch::deferred, [second] {
          std::string text;
          llvm::raw_string_ostream batch(text);
          for (auto op = second.first; op != second.second; ++op)
            printOp(batch, *op);
          batch.flush();
          return text;
        });
    for (auto op = first.first; op != first.second; ++op)
      printOp(os, *op);
    os << secondText.get();
  }
}

void printGraph(const Graph &graph, llvm::raw_ostream &os) {
  os << "graph ";
  printSigilName(os, '@', graph.name());
  os << " {\n";
  printOps(graph, os);
  for (const Value *output : graph.outputs()) {
    os << "  output ";
    printValue(os, output);
    os << '\n';
  }
  for (const Collection &collection : graph.collections()) {
    os << "  collection ";
    printKey(os, collection.name);
    os << " =";
    bool first = true;
    for (const Value *value : collection.values) {
      os << (first ? " " : ", ");
      first = false;
      printValue(os, value);
    }
    os << '\n';
  }
  os << "}\n";
}

std::string printGraph(const Graph &graph) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printGraph(graph, os);
  os.flush();
  return text;
}

} // namespace remat
