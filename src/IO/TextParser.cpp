//===- TextParser.cpp - Reading the text IR -------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A one-pass recursive-descent parser over a flat, line-oriented grammar (see
/// docs/text-format.md): no recursion on input, one token of lookahead, names
/// resolved through Graph::lookupValue as each line is read. Every op line is
/// checked (kind, arity, attributes, types) before its op is created, so that
/// errors point at the offending token; the finished graph is then verified.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/TextFormat.h"

#include "Lexer.h"
#include "remat/IR/Builder.h"
#include "remat/IR/Diagnostics.h"
#include "remat/IR/OpRegistry.h"
#include "remat/IR/Verifier.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>

namespace remat {
namespace {

using io::Token;
using io::TokenKind;

/// The trailing clauses of a line, in their fixed order.
struct Clauses {
  llvm::SmallVector<Op *, 2> after;
  std::string region;
  std::string device;
};

class TextParser {
public:
  TextParser(llvm::StringRef text, llvm::StringRef sourceName)
      : lexer_(text), sourceName_(sourceName), registry_(OpRegistry::global()) {
  }

  absl::StatusOr<std::unique_ptr<Graph>> parse();

private:
  // Tokens and errors.
  void consume() { tok_ = lexer_.next(); }
  absl::Status errorAt(const Token &tok, const std::string &message) const;
  /// `expected <what>, got <token>`, or the lexer's message on a bad token.
  absl::Status unexpected(llvm::StringRef what) const;
  absl::Status expect(TokenKind kind, llvm::StringRef what);
  absl::Status expectEndOfLine();
  /// The name a ValueName, GraphName or String token spells; quoted names are
  /// decoded into `scratch_`, so the result lives until the next call.
  llvm::StringRef nameOf(const Token &tok);

  // Statements.
  absl::Status parseHeader();
  absl::Status parseStatement();
  absl::Status parseDeclaration();
  absl::Status parseOp();
  absl::Status parseOutput();
  absl::Status parseCollection();

  // Pieces of a line.
  absl::StatusOr<Value *> parseValueUse();
  absl::Status parseNewName(std::string &name, llvm::StringRef what);
  absl::Status parseType(Type &type);
  absl::Status parseAttrDict(AttrList &attrs);
  absl::Status parseAttrValue(Attribute &value);
  absl::Status parseInt(int64_t &value);
  absl::Status parseIntList(std::vector<int64_t> &values);
  absl::Status parseClauses(Clauses &clauses);
  void applyClauses(Op *op, Clauses &clauses, const Token &first);

  io::Lexer lexer_;
  Token tok_;
  llvm::StringRef sourceName_;
  const OpRegistry &registry_;
  std::unique_ptr<Graph> graph_;
  std::string scratch_;

  // Reused across op lines to avoid per-line allocations.
  llvm::SmallVector<std::string, 4> resultNames_;
  llvm::SmallVector<Token, 4> resultTokens_;
  llvm::SmallVector<Value *, 4> operands_;
  llvm::SmallVector<Type, 4> operandTypes_;
  llvm::SmallVector<Type, 2> writtenTypes_;
  llvm::SmallVector<Token, 2> typeTokens_;
  llvm::SmallVector<int64_t, 4> dims_;

  llvm::SmallPtrSet<const Value *, 8> outputSet_;
  llvm::StringMap<unsigned> collectionLines_;
};

absl::Status TextParser::errorAt(const Token &tok,
                                 const std::string &message) const {
  return absl::InvalidArgumentError(
      formatError(sourceName_, tok.loc(), message));
}

absl::Status TextParser::unexpected(llvm::StringRef what) const {
  if (tok_.is(TokenKind::Error))
    return errorAt(tok_, lexer_.errorMessage());
  return errorAt(
      tok_, fmt::format("expected {}, got {}", what.str(), tok_.describe()));
}

absl::Status TextParser::expect(TokenKind kind, llvm::StringRef what) {
  if (!tok_.is(kind))
    return unexpected(what);
  consume();
  return absl::OkStatus();
}

absl::Status TextParser::expectEndOfLine() {
  if (tok_.is(TokenKind::Eof))
    return absl::OkStatus();
  return expect(TokenKind::Newline, "end of line");
}

llvm::StringRef TextParser::nameOf(const Token &tok) {
  if (!tok.spelling.startswith("\""))
    return tok.spelling;
  io::unquote(tok.spelling, scratch_);
  return scratch_;
}

absl::StatusOr<std::unique_ptr<Graph>> TextParser::parse() {
  consume();
  REMAT_RETURN_IF_ERROR(parseHeader());
  for (;;) {
    while (tok_.is(TokenKind::Newline))
      consume();
    if (tok_.is(TokenKind::RBrace))
      break;
    REMAT_RETURN_IF_ERROR(parseStatement());
  }
  consume();
  while (tok_.is(TokenKind::Newline))
    consume();
  if (!tok_.is(TokenKind::Eof))
    return unexpected("end of file after the graph");
  // Every op line was checked against shape inference as it was read.
  REMAT_RETURN_IF_ERROR(verify(*graph_, {.checkInferredTypes = false}));
  return std::move(graph_);
}

absl::Status TextParser::parseHeader() {
  while (tok_.is(TokenKind::Newline))
    consume();
  if (!tok_.isKeyword("graph"))
    return unexpected("'graph'");
  consume();
  if (!tok_.is(TokenKind::GraphName))
    return unexpected("a graph name '@name'");
  graph_ = std::make_unique<Graph>(nameOf(tok_).str());
  graph_->setSourceName(sourceName_.str());
  consume();
  REMAT_RETURN_IF_ERROR(expect(TokenKind::LBrace, "'{'"));
  return expect(TokenKind::Newline, "end of line after '{'");
}

absl::Status TextParser::parseStatement() {
  if (tok_.is(TokenKind::ValueName))
    return parseOp();
  if (tok_.isKeyword("input") || tok_.isKeyword("param"))
    return parseDeclaration();
  if (tok_.isKeyword("output"))
    return parseOutput();
  if (tok_.isKeyword("collection"))
    return parseCollection();
  return unexpected("an op, 'input', 'param', 'output', 'collection' or '}'");
}

absl::StatusOr<Value *> TextParser::parseValueUse() {
  if (!tok_.is(TokenKind::ValueName))
    return unexpected("a value name");
  Value *value = graph_->lookupValue(nameOf(tok_));
  if (!value)
    return errorAt(tok_,
                   fmt::format("use of undefined value {}", tok_.describe()));
  consume();
  return value;
}

absl::Status TextParser::parseNewName(std::string &name, llvm::StringRef what) {
  if (!tok_.is(TokenKind::ValueName))
    return unexpected(what);
  llvm::StringRef spelled = nameOf(tok_);
  if (Value *previous = graph_->lookupValue(spelled))
    return errorAt(tok_, fmt::format("redefinition of value {}, first defined "
                                     "at line {}",
                                     tok_.describe(),
                                     previous->producer()->loc().line));
  name.assign(spelled.data(), spelled.size());
  consume();
  return absl::OkStatus();
}

absl::Status TextParser::parseInt(int64_t &value) {
  if (!tok_.is(TokenKind::Int))
    return unexpected("an integer");
  llvm::StringRef text = tok_.spelling;
  auto [end, ec] = std::from_chars(text.begin(), text.end(), value);
  if (ec != std::errc() || end != text.end())
    return errorAt(
        tok_, fmt::format("integer {} does not fit in int64", tok_.describe()));
  consume();
  return absl::OkStatus();
}

absl::Status TextParser::parseIntList(std::vector<int64_t> &values) {
  REMAT_RETURN_IF_ERROR(expect(TokenKind::LSquare, "'['"));
  if (tok_.is(TokenKind::RSquare)) {
    consume();
    return absl::OkStatus();
  }
  for (;;) {
    int64_t value;
    REMAT_RETURN_IF_ERROR(parseInt(value));
    values.push_back(value);
    if (tok_.is(TokenKind::RSquare)) {
      consume();
      return absl::OkStatus();
    }
    REMAT_RETURN_IF_ERROR(expect(TokenKind::Comma, "',' or ']'"));
  }
}

absl::Status TextParser::parseType(Type &type) {
  if (!tok_.is(TokenKind::Identifier))
    return unexpected("a type such as f32[2,3]");
  Token typeTok = tok_;
  std::optional<DType> dtype = parseDType(tok_.spelling);
  if (!dtype)
    return errorAt(tok_, fmt::format("unknown dtype {}", tok_.describe()));
  consume();
  REMAT_RETURN_IF_ERROR(expect(TokenKind::LSquare, "'[' after the dtype"));
  dims_.clear();
  if (!tok_.is(TokenKind::RSquare)) {
    for (;;) {
      Token dimTok = tok_;
      int64_t dim;
      REMAT_RETURN_IF_ERROR(parseInt(dim));
      if (dim < 0)
        return errorAt(dimTok, fmt::format("negative dimension {}", dim));
      dims_.push_back(dim);
      if (tok_.is(TokenKind::RSquare))
        break;
      REMAT_RETURN_IF_ERROR(expect(TokenKind::Comma, "',' or ']'"));
    }
  }
  consume();
  type = Type(*dtype, dims_);
  if (!type.checkedByteSize())
    return errorAt(typeTok, fmt::format("type {} is too large: its byte size "
                                        "overflows int64",
                                        type.str()));
  return absl::OkStatus();
}

absl::Status TextParser::parseAttrValue(Attribute &value) {
  switch (tok_.kind) {
  case TokenKind::Int: {
    int64_t v;
    REMAT_RETURN_IF_ERROR(parseInt(v));
    value = Attribute(v);
    return absl::OkStatus();
  }
  case TokenKind::Float: {
    double v;
    if (tok_.spelling == "-inf") {
      v = -std::numeric_limits<double>::infinity();
    } else {
      llvm::StringRef text = tok_.spelling;
      auto [end, ec] = std::from_chars(text.begin(), text.end(), v);
      if (ec != std::errc() || end != text.end())
        return errorAt(
            tok_, fmt::format("float {} is out of range", tok_.describe()));
    }
    consume();
    value = Attribute(v);
    return absl::OkStatus();
  }
  case TokenKind::String: {
    std::string text;
    io::unquote(tok_.spelling, text);
    consume();
    value = Attribute(std::move(text));
    return absl::OkStatus();
  }
  case TokenKind::LSquare: {
    std::vector<int64_t> values;
    REMAT_RETURN_IF_ERROR(parseIntList(values));
    value = Attribute(std::move(values));
    return absl::OkStatus();
  }
  case TokenKind::Identifier:
    if (tok_.spelling == "true" || tok_.spelling == "false") {
      value = Attribute(tok_.spelling == "true");
      consume();
      return absl::OkStatus();
    }
    if (tok_.spelling == "inf" || tok_.spelling == "nan") {
      value = Attribute(tok_.spelling == "inf"
                            ? std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::quiet_NaN());
      consume();
      return absl::OkStatus();
    }
    break;
  default:
    break;
  }
  return unexpected("an attribute value");
}

absl::Status TextParser::parseAttrDict(AttrList &attrs) {
  consume(); // '{'
  if (tok_.is(TokenKind::RBrace)) {
    consume();
    return absl::OkStatus();
  }
  for (;;) {
    if (!tok_.is(TokenKind::Identifier) && !tok_.is(TokenKind::String))
      return unexpected("an attribute name");
    NamedAttr attr;
    attr.name = nameOf(tok_).str();
    consume();
    REMAT_RETURN_IF_ERROR(
        expect(TokenKind::Equal, "'=' after the attribute name"));
    REMAT_RETURN_IF_ERROR(parseAttrValue(attr.value));
    attrs.push_back(std::move(attr));
    if (tok_.is(TokenKind::RBrace)) {
      consume();
      return absl::OkStatus();
    }
    REMAT_RETURN_IF_ERROR(expect(TokenKind::Comma, "',' or '}'"));
  }
}

absl::Status TextParser::parseClauses(Clauses &clauses) {
  static constexpr llvm::StringLiteral kOrder[] = {"after", "region", "device"};
  unsigned next = 0;
  if (tok_.isKeyword("after")) {
    next = 1;
    consume();
    REMAT_RETURN_IF_ERROR(expect(TokenKind::LParen, "'(' after 'after'"));
    llvm::SmallPtrSet<Op *, 4> seen;
    for (;;) {
      Token depTok = tok_;
      REMAT_ASSIGN_OR_RETURN(Value * dep, parseValueUse());
      if (!seen.insert(dep->producer()).second)
        return errorAt(depTok,
                       fmt::format("control dependency on '{}' is listed twice",
                                   dep->producer()->describe()));
      clauses.after.push_back(dep->producer());
      if (tok_.is(TokenKind::RParen))
        break;
      REMAT_RETURN_IF_ERROR(expect(TokenKind::Comma, "',' or ')'"));
    }
    consume();
  }
  for (unsigned i = 1; i < 3; ++i) {
    if (!tok_.isKeyword(kOrder[i]))
      continue;
    next = i + 1;
    consume();
    if (!tok_.is(TokenKind::String))
      return unexpected(fmt::format("a quoted {} name", kOrder[i].str()));
    std::string &text = i == 1 ? clauses.region : clauses.device;
    io::unquote(tok_.spelling, text);
    if (text.empty())
      return errorAt(tok_, fmt::format("{} name is empty", kOrder[i].str()));
    consume();
  }
  for (unsigned i = 0; i < next; ++i)
    if (tok_.isKeyword(kOrder[i]))
      return errorAt(tok_, fmt::format("'{}' clause is repeated or out of "
                                       "order; clauses go in the order after, "
                                       "region, device",
                                       kOrder[i].str()));
  return absl::OkStatus();
}

void TextParser::applyClauses(Op *op, Clauses &clauses, const Token &first) {
  op->setLoc(first.loc());
  for (Op *dep : clauses.after)
    op->addControlDep(dep);
  if (!clauses.region.empty())
    op->setRegion(std::move(clauses.region));
  if (!clauses.device.empty())
    op->setDevice(std::move(clauses.device));
}

absl::Status TextParser::parseDeclaration() {
  Token first = tok_;
  const OpDef *def = registry_.lookup(tok_.spelling);
  assert(def && def->hasFlag(OpFlagLeaf) && "input and param are registered");
  consume();
  resultNames_.resize(1);
  REMAT_RETURN_IF_ERROR(parseNewName(resultNames_[0], "a value name"));
  REMAT_RETURN_IF_ERROR(expect(TokenKind::Colon, "':' and the declared type"));
  Type type;
  REMAT_RETURN_IF_ERROR(parseType(type));
  Clauses clauses;
  REMAT_RETURN_IF_ERROR(parseClauses(clauses));
  REMAT_RETURN_IF_ERROR(expectEndOfLine());
  Op *op = graph_->createOp(*def, {}, {}, {type}, resultNames_);
  applyClauses(op, clauses, first);
  return absl::OkStatus();
}

absl::Status TextParser::parseOp() {
  Token first = tok_;
  resultNames_.clear();
  resultTokens_.clear();
  for (;;) {
    resultTokens_.push_back(tok_);
    REMAT_RETURN_IF_ERROR(
        parseNewName(resultNames_.emplace_back(), "a result name"));
    if (tok_.is(TokenKind::Equal))
      break;
    REMAT_RETURN_IF_ERROR(expect(TokenKind::Comma, "',' or '='"));
  }
  consume();
  if (resultNames_.size() > 1) {
    llvm::DenseSet<llvm::StringRef> seen;
    for (unsigned i = 0, e = resultNames_.size(); i < e; ++i)
      if (!seen.insert(resultNames_[i]).second)
        return errorAt(resultTokens_[i],
                       fmt::format("result name {} is repeated",
                                   resultTokens_[i].describe()));
  }

  if (!tok_.is(TokenKind::Identifier))
    return unexpected("an op kind");
  Token kindTok = tok_;
  const OpDef *def = registry_.lookup(tok_.spelling);
  if (!def)
    return errorAt(tok_, fmt::format("unknown op {}", tok_.describe()));
  consume();

  REMAT_RETURN_IF_ERROR(expect(TokenKind::LParen, "'(' after the op kind"));
  operands_.clear();
  operandTypes_.clear();
  if (!tok_.is(TokenKind::RParen)) {
    for (;;) {
      REMAT_ASSIGN_OR_RETURN(Value * operand, parseValueUse());
      operands_.push_back(operand);
      operandTypes_.push_back(operand->type());
      if (tok_.is(TokenKind::RParen))
        break;
      REMAT_RETURN_IF_ERROR(expect(TokenKind::Comma, "',' or ')'"));
    }
  }
  consume();

  AttrList attrs;
  if (tok_.is(TokenKind::LBrace))
    REMAT_RETURN_IF_ERROR(parseAttrDict(attrs));

  writtenTypes_.clear();
  typeTokens_.clear();
  if (tok_.is(TokenKind::Colon)) {
    consume();
    for (;;) {
      typeTokens_.push_back(tok_);
      REMAT_RETURN_IF_ERROR(parseType(writtenTypes_.emplace_back()));
      if (!tok_.is(TokenKind::Comma))
        break;
      consume();
    }
  }
  Clauses clauses;
  REMAT_RETURN_IF_ERROR(parseClauses(clauses));
  REMAT_RETURN_IF_ERROR(expectEndOfLine());

  absl::StatusOr<llvm::SmallVector<Type, 1>> inferred =
      inferResultTypes(*def, operandTypes_, attrs);
  if (!inferred.ok())
    return errorAt(kindTok, std::string(inferred.status().message()));
  size_t numResults = inferred->size();
  auto plural = [](size_t n, const char *word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
  };
  if (resultNames_.size() != numResults)
    return errorAt(first,
                   fmt::format("'{}' has {}, got {}", def->name,
                               plural(numResults, "result"),
                               plural(resultNames_.size(), "result name")));
  if (!writtenTypes_.empty()) {
    if (writtenTypes_.size() != numResults)
      return errorAt(typeTokens_.front(),
                     fmt::format("'{}' has {}, got {}", def->name,
                                 plural(numResults, "result"),
                                 plural(writtenTypes_.size(), "result type")));
    for (size_t i = 0; i < numResults; ++i)
      if (writtenTypes_[i] != (*inferred)[i])
        return errorAt(typeTokens_[i],
                       fmt::format("{} is declared {} but shape inference "
                                   "gives {}",
                                   resultTokens_[i].describe(),
                                   writtenTypes_[i].str(),
                                   (*inferred)[i].str()));
  }
  Op *op = graph_->createOp(*def, operands_, std::move(attrs), *inferred,
                            resultNames_);
  applyClauses(op, clauses, first);
  return absl::OkStatus();
}

absl::Status TextParser::parseOutput() {
  consume();
  Token valueTok = tok_;
  REMAT_ASSIGN_OR_RETURN(Value * value, parseValueUse());
  if (!outputSet_.insert(value).second)
    return errorAt(valueTok,
                   fmt::format("{} is already an output", valueTok.describe()));
  REMAT_RETURN_IF_ERROR(expectEndOfLine());
  graph_->addOutput(value);
  return absl::OkStatus();
}

absl::Status TextParser::parseCollection() {
  consume();
  if (!tok_.is(TokenKind::Identifier) && !tok_.is(TokenKind::String))
    return unexpected("a collection name");
  Token nameTok = tok_;
  std::string name = nameOf(tok_).str();
  auto [it, inserted] = collectionLines_.try_emplace(name, nameTok.line);
  if (!inserted)
    return errorAt(nameTok, fmt::format("collection {} is already defined at "
                                        "line {}",
                                        nameTok.describe(), it->second));
  consume();
  REMAT_RETURN_IF_ERROR(
      expect(TokenKind::Equal, "'=' after the collection name"));
  llvm::SmallPtrSet<const Value *, 8> members;
  llvm::SmallVector<Value *, 8> values;
  for (;;) {
    Token valueTok = tok_;
    REMAT_ASSIGN_OR_RETURN(Value * value, parseValueUse());
    if (!members.insert(value).second)
      return errorAt(valueTok,
                     fmt::format("{} is listed twice in collection {}",
                                 valueTok.describe(), nameTok.describe()));
    values.push_back(value);
    if (!tok_.is(TokenKind::Comma))
      break;
    consume();
  }
  REMAT_RETURN_IF_ERROR(expectEndOfLine());
  for (Value *value : values)
    graph_->addToCollection(name, value);
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::unique_ptr<Graph>> parseGraph(llvm::StringRef text,
                                                  llvm::StringRef sourceName) {
  return TextParser(text, sourceName).parse();
}

absl::StatusOr<std::unique_ptr<Graph>> parseGraphFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buffer)
    return invalidArgument("{}: error: cannot read file: {}", path.str(),
                           buffer.getError().message());
  return parseGraph((*buffer)->getBuffer(), path == "-" ? "<stdin>" : path);
}

} // namespace remat
