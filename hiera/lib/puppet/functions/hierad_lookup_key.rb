# The Hiera 5 `lookup_key` backend of hierad, for datasources too large to
# fetch whole: one request per key and location (Puppet remembers each
# answer for the compile). Values are interpolated by Puppet, as yaml_data
# values are.
#
#   hierarchy:
#     - name: hierad keys
#       lookup_key: hierad_lookup_key
#       uris: [astute]
#       options: {url: "http://hierad.example:8750", environment: 1, level: "nodes=%{trusted.certname}"}
require_relative '../../puppet_x/hierad/hiera5'

Puppet::Functions.create_function(:hierad_lookup_key) do
  dispatch :lookup_key do
    param 'Variant[String, Numeric]', :key
    param 'Hash[String, Any]', :options
    param 'Puppet::LookupContext', :context
  end

  def lookup_key(key, options, context)
    found, value = PuppetX::Hierad::Hiera5.lookup_key(key, options)
    context.not_found unless found
    context.interpolate(value)
  end
end
