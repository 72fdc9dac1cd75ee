# The Hiera 5 `lookup_key` backend of hierad: Puppet asks it key by key,
# and it answers from the whole datasource, fetched on the first key of
# each location in a compile (revalidated with its ETag across compiles,
# as hierad_data_hash does): one request per location, whatever the number
# of keys. Values are interpolated by Puppet one key at a time, as
# yaml_data values are.
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
    # The context's cache lives for the compile, one per location. The
    # datasource's keys are Strings (or other data), never this Symbol.
    unless context.cache_has_key(:hierad_fetched)
      context.cache_all(PuppetX::Hierad::Hiera5.data_hash(options, 'hierad_lookup_key'))
      context.cache(:hierad_fetched, true)
    end
    context.not_found unless context.cache_has_key(key)
    context.interpolate(context.cached_value(key))
  end
end
