# @summary Applies what the node's data says about its resources:
#   `include hierad_resources::override` looks up `configuration`,
#   `configuration_options` and `defaults` and declares one
#   override_resources with them, which updates the catalog's resources
#   and creates the missing ones (see lib/puppet/type/override_resources.rb).
#
# @param merge
#   How the hierarchy's levels are merged for the three keys: `hash` (a
#   type given at a higher level replaces the same type below it) or `deep`
#   (titles and parameters from every level are combined, as Fuel's
#   `:merge_behavior: deeper` did).
class hierad_resources::override (
  Enum['hash', 'deep'] $merge = 'hash',
) {
  override_resources { 'hierad_resources::override':
    configuration => lookup('configuration', Hash, $merge, {}),
    options       => lookup('configuration_options', Hash, $merge, {}),
    defaults      => lookup('defaults', Hash, $merge, {}),
  }
}
