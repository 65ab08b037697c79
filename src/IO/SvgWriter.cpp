//===- SvgWriter.cpp - A small SVG writer -------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "IO/SvgWriter.h"

#include <fmt/format.h>

namespace remat::svg {

std::string num(double value) {
  std::string text = fmt::format("{:.1f}", value);
  // -0.0 and 0.0 are one coordinate: print it one way.
  return text == "-0.0" ? "0.0" : text;
}

std::string escapeXml(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

PathData &PathData::moveTo(double x, double y) {
  data_ += fmt::format("M{} {}", num(x), num(y));
  return *this;
}

PathData &PathData::lineTo(double x, double y) {
  data_ += fmt::format("L{} {}", num(x), num(y));
  return *this;
}

PathData &PathData::horizontalTo(double x) {
  data_ += "H" + num(x);
  return *this;
}

PathData &PathData::verticalTo(double y) {
  data_ += "V" + num(y);
  return *this;
}

PathData &PathData::close() {
  data_ += "Z";
  return *this;
}

SvgWriter::SvgWriter(llvm::raw_ostream &os, double width, double height,
                     llvm::StringRef title)
    : os_(os) {
  os_ << fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
                     "height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                     "font-family=\"sans-serif\">\n",
                     num(width), num(height));
  os_ << "<title>" << escapeXml(title) << "</title>\n";
  rect(0, 0, width, height, {.fill = "#ffffff"});
}

SvgWriter::~SvgWriter() { os_ << "</svg>\n"; }

void SvgWriter::writePaint(const Paint &paint) {
  os_ << fmt::format(" fill=\"{}\"", paint.fill);
  if (paint.fillOpacity != 1)
    os_ << fmt::format(" fill-opacity=\"{:.2f}\"", paint.fillOpacity);
  if (paint.stroke.empty())
    return;
  os_ << fmt::format(" stroke=\"{}\" stroke-width=\"{}\"", paint.stroke,
                     num(paint.strokeWidth));
  if (!paint.dash.empty())
    os_ << fmt::format(" stroke-dasharray=\"{}\"", paint.dash);
}

void SvgWriter::rect(double x, double y, double width, double height,
                     const Paint &paint) {
  os_ << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"",
                     num(x), num(y), num(width), num(height));
  writePaint(paint);
  os_ << "/>\n";
}

void SvgWriter::line(double x1, double y1, double x2, double y2,
                     const Paint &paint) {
  os_ << fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"", num(x1),
                     num(y1), num(x2), num(y2));
  writePaint(paint);
  os_ << "/>\n";
}

void SvgWriter::path(const PathData &data, const Paint &paint) {
  os_ << "<path d=\"" << data.str() << '"';
  writePaint(paint);
  os_ << "/>\n";
}

void SvgWriter::circle(double cx, double cy, double r, const Paint &paint) {
  os_ << fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"", num(cx), num(cy),
                     num(r));
  writePaint(paint);
  os_ << "/>\n";
}

void SvgWriter::text(double x, double y, llvm::StringRef text,
                     const Font &font) {
  static constexpr const char *kAnchors[] = {"start", "middle", "end"};
  os_ << fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\"",
                     num(x), num(y), num(font.size), font.fill);
  if (font.anchor != AnchorKind::Start)
    os_ << fmt::format(" text-anchor=\"{}\"", kAnchors[int(font.anchor)]);
  if (font.bold)
    os_ << " font-weight=\"bold\"";
  if (font.rotate != 0)
    os_ << fmt::format(" transform=\"rotate({} {} {})\"", num(font.rotate),
                       num(x), num(y));
  os_ << '>' << escapeXml(text) << "</text>\n";
}

void SvgWriter::comment(llvm::StringRef text) {
  // "--" may not appear inside an XML comment.
  std::string body = text.str();
  for (size_t at = body.find("--"); at != std::string::npos;
       at = body.find("--", at))
    body.replace(at, 2, "- ");
  os_ << "<!-- " << body << " -->\n";
}

} // namespace remat::svg
