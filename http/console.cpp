// Serves the embedded console files with their content type and the console's security headers.
#include "http/console.hpp"

#include <string>

namespace seatflow::http {

std::optional<HttpResponse> console_response(std::string_view path) {
  const std::string_view wanted =
      path == "/console" || path == "/console/" ? std::string_view("/console/index.html") : path;
  for (const auto& asset : console_assets()) {
    if (asset.path != wanted) {
      continue;
    }
    HttpResponse response{200, std::string(asset.content_type), std::string(asset.body), {}};
    response.headers.emplace_back("Content-Security-Policy", std::string(kConsoleCsp));
    response.headers.emplace_back("X-Content-Type-Options", "nosniff");
    response.headers.emplace_back("Referrer-Policy", "no-referrer");
    response.headers.emplace_back("X-Frame-Options", "DENY");
    // The files change with the binary: revalidate rather than run yesterday's console.
    response.headers.emplace_back("Cache-Control", "no-cache");
    return response;
  }
  return std::nullopt;
}

}  // namespace seatflow::http
