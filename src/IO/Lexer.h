//===- Lexer.h - Tokens of the text IR --------------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Splits text IR into tokens that point into the buffer (no copies). Newlines
/// are tokens because every statement is one line; spaces, tabs, carriage
/// returns and `//` comments are skipped. Any byte sequence lexes without
/// reading past the buffer: a malformed token becomes an `Error` token whose
/// location is the offending byte. Private to src/IO.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_LEXER_H
#define REMAT_SRC_IO_LEXER_H

#include "remat/IR/Op.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace remat::io {

enum class TokenKind : uint8_t {
  Eof,
  Newline,
  /// A malformed token; `Lexer::errorMessage()` says what is wrong.
  Error,
  /// `[A-Za-z_][A-Za-z0-9_]*`: keywords, op kinds, dtypes, attribute names.
  Identifier,
  /// `%name` or `%"quoted"`; the spelling drops the `%`.
  ValueName,
  /// `@name` or `@"quoted"`; the spelling drops the `@`.
  GraphName,
  /// `-?[0-9]+`.
  Int,
  /// `-?[0-9]+(.[0-9]*)?([eE][+-]?[0-9]+)?` with a `.` or an exponent, or
  /// `-inf`.
  Float,
  /// `"..."`; the spelling keeps the quotes and the escapes.
  String,
  LBrace,
  RBrace,
  LParen,
  RParen,
  LSquare,
  RSquare,
  Comma,
  Equal,
  Colon,
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef spelling;
  unsigned line = 0;
  unsigned column = 0;

  bool is(TokenKind k) const { return kind == k; }
  bool isKeyword(llvm::StringRef keyword) const {
    return kind == TokenKind::Identifier && spelling == keyword;
  }
  SourceLoc loc() const { return {line, column}; }
  /// How a message shows the token: `'%h'`, `end of line`, ... Long spellings
  /// are cut and unprintable bytes escaped.
  std::string describe() const;
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer)
      : cur_(buffer.begin()), end_(buffer.end()), lineStart_(buffer.begin()) {}

  /// The next token; `Eof` forever once the buffer is used up.
  Token next();
  /// What is wrong with the last `Error` token.
  const std::string &errorMessage() const { return error_; }

private:
  Token make(TokenKind kind, const char *start, const char *stop) const;
  Token error(const char *at, std::string message);
  Token lexNumber(const char *start);
  Token lexIdentifier(const char *start);
  Token lexSigilName(const char *start, TokenKind kind);
  /// Lexes a string whose opening quote is at `quote` and returns its end (one
  /// past the closing quote), or null after setting `error_`/`errorAt_`.
  const char *scanString(const char *quote);

  const char *cur_;
  const char *end_;
  const char *lineStart_;
  unsigned line_ = 1;
  std::string error_;
  const char *errorAt_ = nullptr;
};

/// True for the bytes a bare `%name` or `@name` may hold: `[A-Za-z0-9_.$/-]`.
bool isBareNameChar(char c);
/// True if `name` can be written after `%` or `@` without quotes: non-empty,
/// only bare-name bytes, and no `//` (which would start a comment).
bool isBareName(llvm::StringRef name);
/// True if `name` can be written as an identifier (attribute and collection
/// names; otherwise they are quoted).
bool isIdentifier(llvm::StringRef name);

/// Decodes the spelling of a string token (quotes and escapes included, as the
/// lexer validated it) into `out`.
void unquote(llvm::StringRef spelling, std::string &out);

} // namespace remat::io

#endif // REMAT_SRC_IO_LEXER_H
