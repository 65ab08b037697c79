//===- Lexer.cpp - Tokens of the text IR ----------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Lexer.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cstring>

namespace remat::io {

static bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }
static bool isControl(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

/// A byte as a message shows it: `'#'`, or `byte 0x00` when unprintable.
static std::string describeByte(char c) {
  auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f)
    return fmt::format("character '{}'", c);
  return fmt::format("byte 0x{:02x}", byte);
}

bool isBareNameChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$' || c == '/' ||
         c == '-';
}

bool isBareName(llvm::StringRef name) {
  if (name.empty())
    return false;
  // One pass: every character allowed, and no `//` (a comment's start).
  char previous = 0;
  for (char c : name) {
    if (!isBareNameChar(c) || (c == '/' && previous == '/'))
      return false;
    previous = c;
  }
  return true;
}

bool isIdentifier(llvm::StringRef name) {
  if (name.empty() || !isIdentStart(name.front()))
    return false;
  for (char c : name)
    if (!isIdentChar(c))
      return false;
  return true;
}

void unquote(llvm::StringRef spelling, std::string &out) {
  out.clear();
  llvm::StringRef body = spelling.drop_front().drop_back();
  for (size_t i = 0, e = body.size(); i < e; ++i) {
    char c = body[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    char escape = body[++i];
    if (escape == 'n') {
      out += '\n';
    } else if (escape == 'x') {
      out += static_cast<char>(llvm::hexDigitValue(body[i + 1]) * 16 +
                               llvm::hexDigitValue(body[i + 2]));
      i += 2;
    } else {
      out += escape; // `\"` or `\\`.
    }
  }
}

std::string Token::describe() const {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Newline:
    return "end of line";
  default:
    break;
  }
  std::string text;
  if (kind == TokenKind::ValueName)
    text = "%";
  else if (kind == TokenKind::GraphName)
    text = "@";
  constexpr size_t kMaxShown = 40;
  for (char c : spelling.take_front(kMaxShown)) {
    if (isControl(c) || static_cast<unsigned char>(c) >= 0x80)
      text += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      text += c;
  }
  if (spelling.size() > kMaxShown)
    text += "...";
  return "'" + text + "'";
}

Token Lexer::make(TokenKind kind, const char *start, const char *stop) const {
  Token tok;
  tok.kind = kind;
  tok.spelling = llvm::StringRef(start, stop - start);
  tok.line = line_;
  tok.column = static_cast<unsigned>(start - lineStart_) + 1;
  return tok;
}

Token Lexer::error(const char *at, std::string message) {
  error_ = std::move(message);
  // Skip the rest of the line so that a caller that keeps lexing moves on.
  const char *newline =
      static_cast<const char *>(std::memchr(at, '\n', end_ - at));
  Token tok = make(TokenKind::Error, at, at);
  cur_ = newline ? newline : end_;
  return tok;
}

Token Lexer::next() {
  for (;;) {
    if (cur_ == end_)
      return make(TokenKind::Eof, cur_, cur_);
    char c = *cur_;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++cur_;
      continue;
    }
    if (c == '/' && cur_ + 1 != end_ && cur_[1] == '/') {
      const char *newline =
          static_cast<const char *>(std::memchr(cur_, '\n', end_ - cur_));
      cur_ = newline ? newline : end_;
      continue;
    }
    break;
  }

  const char *start = cur_;
  auto single = [&](TokenKind kind) {
    ++cur_;
    return make(kind, start, cur_);
  };
  switch (*start) {
  case '\n': {
    Token tok = single(TokenKind::Newline);
    ++line_;
    lineStart_ = cur_;
    return tok;
  }
  case '{':
    return single(TokenKind::LBrace);
  case '}':
    return single(TokenKind::RBrace);
  case '(':
    return single(TokenKind::LParen);
  case ')':
    return single(TokenKind::RParen);
  case '[':
    return single(TokenKind::LSquare);
  case ']':
    return single(TokenKind::RSquare);
  case ',':
    return single(TokenKind::Comma);
  case '=':
    return single(TokenKind::Equal);
  case ':':
    return single(TokenKind::Colon);
  case '%':
    return lexSigilName(start, TokenKind::ValueName);
  case '@':
    return lexSigilName(start, TokenKind::GraphName);
  case '"': {
    const char *stop = scanString(start);
    if (!stop)
      return error(errorAt_, error_);
    cur_ = stop;
    return make(TokenKind::String, start, stop);
  }
  default:
    break;
  }
  if (*start == '-' || llvm::isDigit(*start))
    return lexNumber(start);
  if (isIdentStart(*start))
    return lexIdentifier(start);
  return error(start, fmt::format("unexpected {}", describeByte(*start)));
}

Token Lexer::lexIdentifier(const char *start) {
  const char *p = start + 1;
  while (p != end_ && isIdentChar(*p))
    ++p;
  cur_ = p;
  return make(TokenKind::Identifier, start, p);
}

Token Lexer::lexNumber(const char *start) {
  const char *p = start;
  auto atDigit = [&] { return p != end_ && llvm::isDigit(*p); };
  auto skipDigits = [&] {
    while (atDigit())
      ++p;
  };
  if (*p == '-') {
    ++p;
    llvm::StringRef rest(p, end_ - p);
    if (rest.startswith("inf") && (rest.size() == 3 || !isIdentChar(rest[3]))) {
      cur_ = p + 3;
      return make(TokenKind::Float, start, cur_);
    }
    if (!atDigit())
      return error(p, "expected a digit after '-'");
  }
  skipDigits();
  bool isFloat = false;
  if (p != end_ && *p == '.') {
    isFloat = true;
    ++p;
    skipDigits();
  }
  if (p != end_ && (*p == 'e' || *p == 'E')) {
    isFloat = true;
    ++p;
    if (p != end_ && (*p == '+' || *p == '-'))
      ++p;
    if (!atDigit())
      return error(p, "expected a digit in the exponent of a number");
    skipDigits();
  }
  if (p != end_ && (isIdentChar(*p) || *p == '.'))
    return error(p, fmt::format("unexpected {} in a number", describeByte(*p)));
  cur_ = p;
  return make(isFloat ? TokenKind::Float : TokenKind::Int, start, p);
}

Token Lexer::lexSigilName(const char *start, TokenKind kind) {
  const char *p = start + 1;
  if (p != end_ && *p == '"') {
    const char *stop = scanString(p);
    if (!stop)
      return error(errorAt_, error_);
    cur_ = stop;
    Token tok = make(kind, start, stop);
    tok.spelling = tok.spelling.drop_front();
    return tok;
  }
  while (p != end_ && isBareNameChar(*p) &&
         !(*p == '/' && p + 1 != end_ && p[1] == '/'))
    ++p;
  if (p == start + 1)
    return error(p, fmt::format("expected a name after '{}'", *start));
  cur_ = p;
  Token tok = make(kind, start, p);
  tok.spelling = tok.spelling.drop_front();
  return tok;
}

const char *Lexer::scanString(const char *quote) {
  auto fail = [&](const char *at, std::string message) -> const char * {
    errorAt_ = at;
    error_ = std::move(message);
    return nullptr;
  };
  for (const char *p = quote + 1;; ++p) {
    if (p == end_ || *p == '\n')
      return fail(quote, "unterminated string");
    if (*p == '"')
      return p + 1;
    if (isControl(*p))
      return fail(p, fmt::format("unexpected {} in a string; write it as \\xHH",
                                 describeByte(*p)));
    if (*p != '\\')
      continue;
    const char *escape = p + 1;
    if (escape == end_)
      return fail(quote, "unterminated string");
    if (*escape == '"' || *escape == '\\' || *escape == 'n') {
      p = escape;
      continue;
    }
    if (*escape == 'x') {
      if (end_ - escape < 3 || !llvm::isHexDigit(escape[1]) ||
          !llvm::isHexDigit(escape[2]))
        return fail(p, "'\\x' escape needs two hex digits");
      p = escape + 2;
      continue;
    }
    auto byte = static_cast<unsigned char>(*escape);
    if (byte > 0x20 && byte < 0x7f)
      return fail(p, fmt::format("unknown escape sequence '\\{}'", *escape));
    return fail(p, fmt::format("unknown escape sequence: '\\' then {}",
                               describeByte(*escape)));
  }
}

} // namespace remat::io
