# The Hiera 5 `lookup_key` backend of hierad: Puppet asks it key by key,
# and it answers from the whole datasource, fetched on a location's first
# key in a compile (revalidated with its ETag as hierad::data_hash does).
# Puppet interpolates each value as it is asked for.
#
#   hierarchy:
#     - name: hierad keys
#       lookup_key: hierad::lookup_key
#       uris: [astute]
#       options: {url: "http://hierad.example:8750", environment: 1}
require_relative '../../../puppet_x/hierad/hiera5'

Puppet::Functions.create_function(:'hierad::lookup_key') do
  dispatch :lookup_key do
    param 'Variant[String, Numeric]', :key
    param 'Hash[String, Any]', :options
    param 'Puppet::LookupContext', :context
  end

  def lookup_key(key, options, context)
    # The context's cache lives for the compile, one per location. The
    # datasource's keys are Strings (or other data), never this Symbol.
    context.cache_all(PuppetX::Hierad::Hiera5.data_hash(options, 'hierad::lookup_key').merge(hierad_fetched: true)) unless context.cache_has_key(:hierad_fetched)
    context.not_found unless context.cache_has_key(key)
    context.interpolate(context.cached_value(key))
  end
end
