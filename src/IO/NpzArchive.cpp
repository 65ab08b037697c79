//===- NpzArchive.cpp - .npz archives of .npy members -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// An `.npz` file is a zip archive (libzip reads and writes it, in memory)
/// whose members are `.npy` files named `NAME.npy`. A member is read in
/// chunks, so that the memory it takes follows the bytes it really holds
/// rather than the size its header claims.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/Npy.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <zip.h>

#include <array>
#include <ctime>
#include <memory>

namespace remat {
namespace {

/// The modification time of every written member (2000-01-01 00:00 UTC), so
/// that the archive's bytes depend only on its arrays.
constexpr time_t kMemberTime = 946684800;

struct ArchiveDiscard {
  void operator()(zip_t *archive) const { zip_discard(archive); }
};
using ArchivePtr = std::unique_ptr<zip_t, ArchiveDiscard>;

struct SourceFree {
  void operator()(zip_source_t *source) const { zip_source_free(source); }
};
using SourcePtr = std::unique_ptr<zip_source_t, SourceFree>;

/// Owns a libzip error record.
class ZipError {
public:
  ZipError() { zip_error_init(&error_); }
  ~ZipError() { zip_error_fini(&error_); }
  ZipError(const ZipError &) = delete;
  ZipError &operator=(const ZipError &) = delete;
  zip_error_t *get() { return &error_; }
  std::string message() { return zip_error_strerror(&error_); }

private:
  zip_error_t error_;
};

/// An archive opened over `bytes`, which must outlive it.
absl::StatusOr<ArchivePtr> openArchive(llvm::StringRef bytes) {
  // libzip takes an empty file for an empty archive; numpy does not.
  if (bytes.empty())
    return invalidArgument("not an .npz (zip) archive: empty file");
  ZipError error;
  SourcePtr source(
      zip_source_buffer_create(bytes.data(), bytes.size(), 0, error.get()));
  if (!source)
    return invalidArgument("{}", error.message());
  ArchivePtr archive(
      zip_open_from_source(source.get(), ZIP_RDONLY | ZIP_CHECKCONS,
                           error.get()));
  // libzip refuses an archive that names two members alike, as "File
  // already exists"; numpy would read the last.
  if (!archive && zip_error_code_zip(error.get()) == ZIP_ER_EXISTS)
    return invalidArgument("the archive holds two members of the same name");
  if (!archive)
    return invalidArgument("not an .npz (zip) archive: {}", error.message());
  // The archive owns the source now.
  source.release();
  return archive;
}

/// The bytes of member `index`.
absl::StatusOr<std::string> readMember(zip_t *archive, zip_uint64_t index) {
  zip_file_t *file = zip_fopen_index(archive, index, 0);
  if (!file)
    return invalidArgument("{}", zip_strerror(archive));
  std::string bytes;
  std::array<char, 1 << 16> chunk;
  zip_int64_t read = 0;
  while ((read = zip_fread(file, chunk.data(), chunk.size())) > 0)
    bytes.append(chunk.data(), size_t(read));
  std::string message = read < 0 ? zip_file_strerror(file) : "";
  if (zip_fclose(file) != 0 && message.empty())
    message = zip_strerror(archive);
  if (!message.empty())
    return invalidArgument("{}", message);
  return bytes;
}

} // namespace

absl::StatusOr<NamedArrays> parseNpz(llvm::StringRef bytes,
                                     llvm::StringRef fileName) {
  auto located = [&](const absl::Status &status) {
    return invalidArgument("{}: error: {}", fileName.str(), std::string(status.message()));
  };
  absl::StatusOr<ArchivePtr> archive = openArchive(bytes);
  if (!archive.ok())
    return located(archive.status());
  NamedArrays arrays;
  llvm::StringSet<> names;
  zip_int64_t count = zip_get_num_entries(archive->get(), 0);
  for (zip_int64_t index = 0; index < count; ++index) {
    const char *rawName = zip_get_name(archive->get(), zip_uint64_t(index), 0);
    if (!rawName)
      return located(invalidArgument("{}", zip_strerror(archive->get())));
    llvm::StringRef member(rawName);
    auto memberError = [&](const absl::Status &status) {
      std::string name;
      llvm::raw_string_ostream os(name);
      llvm::printEscapedString(member, os);
      return invalidArgument("{}: error: member '{}': {}", fileName.str(),
                             os.str(), std::string(status.message()));
    };
    llvm::StringRef name = member;
    if (!name.consume_back(".npy") || name.empty())
      return memberError(invalidArgument("not a .npy file"));
    if (!names.insert(name).second)
      return memberError(invalidArgument("array '{}' repeated", name.str()));
    absl::StatusOr<std::string> memberBytes =
        readMember(archive->get(), zip_uint64_t(index));
    if (!memberBytes.ok())
      return memberError(memberBytes.status());
    absl::StatusOr<NpyArray> array = parseNpy(*memberBytes);
    if (!array.ok())
      return memberError(array.status());
    arrays.emplace_back(name.str(), std::move(*array));
  }
  return arrays;
}

absl::StatusOr<std::string> printNpz(const NamedArrays &arrays,
                                     NpzCompressionKind compression) {
  // libzip writes nothing for an archive without members; numpy writes the
  // 22-byte end-of-central-directory record alone.
  if (arrays.empty())
    return std::string("PK\5\6", 4) + std::string(18, '\0');
  ZipError error;
  SourcePtr target(zip_source_buffer_create(nullptr, 0, 0, error.get()));
  if (!target)
    return invalidArgument("cannot create an archive: {}", error.message());
  ArchivePtr archive(zip_open_from_source(target.get(), ZIP_TRUNCATE,
                                          error.get()));
  if (!archive)
    return invalidArgument("cannot create an archive: {}", error.message());
  // `target` outlives the archive: the bytes are read from it after closing.
  zip_source_keep(target.get());

  // Buffer sources read their data when the archive is closed.
  std::vector<std::string> members;
  members.reserve(arrays.size());
  for (const auto &[name, array] : arrays) {
    const std::string &member =
        members.emplace_back(printNpy(array.type, array.bytes));
    zip_source_t *source =
        zip_source_buffer(archive.get(), member.data(), member.size(), 0);
    zip_int64_t index =
        source ? zip_file_add(archive.get(), (name + ".npy").c_str(), source,
                              ZIP_FL_ENC_UTF_8)
               : -1;
    if (index < 0) {
      zip_source_free(source);
      return invalidArgument("cannot add '{}.npy' to the archive: {}", name,
                             zip_strerror(archive.get()));
    }
    zip_int32_t method =
        compression == NpzCompressionKind::Stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE;
    if (zip_set_file_compression(archive.get(), zip_uint64_t(index), method,
                                 0) != 0 ||
        zip_file_set_mtime(archive.get(), zip_uint64_t(index), kMemberTime,
                           0) != 0)
      return invalidArgument("cannot add '{}.npy' to the archive: {}", name,
                             zip_strerror(archive.get()));
  }
  if (zip_close(archive.get()) != 0)
    return invalidArgument("cannot write the archive: {}",
                           zip_strerror(archive.get()));
  archive.release();

  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_source_stat(target.get(), &stat) != 0 ||
      !(stat.valid & ZIP_STAT_SIZE) || zip_source_open(target.get()) != 0)
    return invalidArgument("cannot read the archive back");
  std::string bytes(size_t(stat.size), '\0');
  zip_int64_t read = zip_source_read(target.get(), bytes.data(), bytes.size());
  zip_source_close(target.get());
  if (read != zip_int64_t(bytes.size()))
    return invalidArgument("cannot read the archive back");
  return bytes;
}

} // namespace remat
