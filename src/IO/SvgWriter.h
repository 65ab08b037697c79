//===- SvgWriter.h - A small SVG writer ---------------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Writes the few SVG elements remat's pictures need (rectangles, lines,
/// paths, circles, text), with coordinates printed at one fixed precision
/// so that the same picture is the same bytes. Private to src/IO.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_IO_SVGWRITER_H
#define REMAT_SRC_IO_SVGWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace remat::svg {

/// A coordinate or length as the writer prints it: one decimal.
std::string num(double value);

/// How a shape is painted; empty strings leave the SVG default.
struct Paint {
  std::string fill = "none";
  std::string stroke;
  double strokeWidth = 1;
  /// `stroke-dasharray`, e.g. "6 4".
  std::string dash;
  /// `fill-opacity`, 1 for opaque.
  double fillOpacity = 1;
};

enum class AnchorKind { Start, Middle, End };

/// How a text is set.
struct Font {
  double size = 12;
  AnchorKind anchor = AnchorKind::Start;
  std::string fill = "#222";
  bool bold = false;
  /// Degrees, about the text's own position.
  double rotate = 0;
};

/// The `d` attribute of a path, built from absolute commands.
class PathData {
public:
  PathData &moveTo(double x, double y);
  PathData &lineTo(double x, double y);
  PathData &horizontalTo(double x);
  PathData &verticalTo(double y);
  PathData &close();
  const std::string &str() const { return data_; }
  bool empty() const { return data_.empty(); }

private:
  std::string data_;
};

/// Writes one `<svg>` document to a stream; the document ends when the
/// writer is destroyed.
class SvgWriter {
public:
  SvgWriter(llvm::raw_ostream &os, double width, double height,
            llvm::StringRef title);
  SvgWriter(const SvgWriter &) = delete;
  SvgWriter &operator=(const SvgWriter &) = delete;
  ~SvgWriter();

  void rect(double x, double y, double width, double height,
            const Paint &paint);
  void line(double x1, double y1, double x2, double y2, const Paint &paint);
  void path(const PathData &data, const Paint &paint);
  void circle(double cx, double cy, double r, const Paint &paint);
  void text(double x, double y, llvm::StringRef text, const Font &font = {});
  /// A comment, for readers of the file and for tests.
  void comment(llvm::StringRef text);

private:
  void writePaint(const Paint &paint);

  llvm::raw_ostream &os_;
};

/// `text` with `&`, `<`, `>` and `"` escaped for XML.
std::string escapeXml(llvm::StringRef text);

} // namespace remat::svg

#endif // REMAT_SRC_IO_SVGWRITER_H
