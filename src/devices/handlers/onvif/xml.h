#ifndef REGATTA_SRC_DEVICES_HANDLERS_ONVIF_XML_H_
#define REGATTA_SRC_DEVICES_HANDLERS_ONVIF_XML_H_

// A thin read-only view of an XML document (libxml2), enough for SOAP replies: elements are
// found by local name, whatever prefix a camera's firmware chose, as Akri's XPath
// (`*[local-name()='...']`) does.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct _xmlDoc;
struct _xmlNode;

namespace regatta::devices::onvif {

class XmlElement {
 public:
  explicit XmlElement(_xmlNode* node) : node_(node) {}
  std::string LocalName() const;
  std::string NamespaceUri() const;
  // The concatenated text below the element.
  std::string Text() const;
  // The direct child elements with this local name.
  std::vector<XmlElement> Children(absl::string_view local_name) const;
  // The first direct child with this local name, or nullopt.
  std::optional<XmlElement> Child(absl::string_view local_name) const;
  // This element's descendants (not itself) with this local name, in document order.
  std::vector<XmlElement> Descendants(absl::string_view local_name) const;

 private:
  _xmlNode* node_;
};

class XmlDocument {
 public:
  // INVALID_ARGUMENT when `text` is not well-formed XML. No network access, no entities.
  static absl::StatusOr<XmlDocument> Parse(absl::string_view text);
  XmlElement Root() const;

 private:
  struct Free {
    void operator()(_xmlDoc* doc) const;
  };
  std::shared_ptr<_xmlDoc> doc_;
};

}  // namespace regatta::devices::onvif

#endif  // REGATTA_SRC_DEVICES_HANDLERS_ONVIF_XML_H_
