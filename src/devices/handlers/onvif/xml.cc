#include "src/devices/handlers/onvif/xml.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace regatta::devices::onvif {
namespace {

const char* AsChars(const xmlChar* text) { return reinterpret_cast<const char*>(text); }

bool HasLocalName(const xmlNode* node, absl::string_view local_name) {
  return node->type == XML_ELEMENT_NODE && node->name != nullptr &&
         absl::string_view(AsChars(node->name)) == local_name;
}

void CollectDescendants(xmlNode* parent, absl::string_view local_name,
                        std::vector<XmlElement>& out) {
  for (xmlNode* child = parent->children; child != nullptr; child = child->next) {
    if (child->type != XML_ELEMENT_NODE) continue;
    if (HasLocalName(child, local_name)) out.emplace_back(child);
    CollectDescendants(child, local_name, out);
  }
}

}  // namespace

std::string XmlElement::LocalName() const { return AsChars(node_->name); }

std::string XmlElement::NamespaceUri() const {
  return node_->ns != nullptr && node_->ns->href != nullptr ? AsChars(node_->ns->href) : "";
}

std::string XmlElement::Text() const {
  xmlChar* content = xmlNodeGetContent(node_);
  if (content == nullptr) return "";
  std::string text = AsChars(content);
  xmlFree(content);
  return text;
}

std::vector<XmlElement> XmlElement::Children(absl::string_view local_name) const {
  std::vector<XmlElement> children;
  for (xmlNode* child = node_->children; child != nullptr; child = child->next) {
    if (HasLocalName(child, local_name)) children.emplace_back(child);
  }
  return children;
}

std::optional<XmlElement> XmlElement::Child(absl::string_view local_name) const {
  for (xmlNode* child = node_->children; child != nullptr; child = child->next) {
    if (HasLocalName(child, local_name)) return XmlElement(child);
  }
  return std::nullopt;
}

std::vector<XmlElement> XmlElement::Descendants(absl::string_view local_name) const {
  std::vector<XmlElement> found;
  CollectDescendants(node_, local_name, found);
  return found;
}

void XmlDocument::Free::operator()(_xmlDoc* doc) const { xmlFreeDoc(doc); }

absl::StatusOr<XmlDocument> XmlDocument::Parse(absl::string_view text) {
  // XML_PARSE_NONET and no XML_PARSE_NOENT/DTDLOAD: a reply from the network never makes the
  // parser fetch or expand anything.
  xmlDoc* doc = xmlReadMemory(text.data(), static_cast<int>(text.size()), "reply.xml", nullptr,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (doc == nullptr) {
    const xmlError* error = xmlGetLastError();
    std::string reason = error != nullptr && error->message != nullptr ? error->message : "";
    while (!reason.empty() && reason.back() == '\n') reason.pop_back();
    return absl::InvalidArgumentError(absl::StrCat("not well-formed XML: ", reason));
  }
  if (xmlDocGetRootElement(doc) == nullptr) {
    xmlFreeDoc(doc);
    return absl::InvalidArgumentError("not well-formed XML: no root element");
  }
  XmlDocument document;
  document.doc_ = std::shared_ptr<_xmlDoc>(doc, Free());
  return document;
}

XmlElement XmlDocument::Root() const { return XmlElement(xmlDocGetRootElement(doc_.get())); }

}  // namespace regatta::devices::onvif
