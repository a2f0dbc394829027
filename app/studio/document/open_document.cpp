#include "app/studio/document/open_document.h"

#include "runtime/package/package_loader.h"

namespace sod2::studio {

Expected<std::shared_ptr<OpenDocument>> OpenDocument::open(const std::string& path,
                                                           const OpenOptions& options,
                                                           const ProgressFn& progress,
                                                           const std::atomic<bool>* cancel) {
  if (rt::is_package_file(path)) {
    SOD2_ASSIGN_OR_RETURN(std::unique_ptr<PackageDocument> pkg, PackageDocument::open(path));
    return of_package(std::shared_ptr<PackageDocument>(std::move(pkg)));
  }
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<StudioDocument> doc,
                        StudioDocument::open(path, options, progress, cancel));
  return of_model(std::shared_ptr<StudioDocument>(std::move(doc)), options.fuse);
}

}  // namespace sod2::studio
