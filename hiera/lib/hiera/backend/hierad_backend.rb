# The Hiera 3 backend `hierad` (hiera/README.md has its settings): each
# lookup is one HTTP request to a hierad server, which resolves, merges and
# interpolates exactly as Hiera 3.10 does over YAML files holding the same
# data. It sends the key, the resolution type, the hierarchy (registered
# once: POST /api/v1/hierarchies, then named by id; a server that does not
# hold the id answers 409 and it is registered again), the order override,
# :merge_behavior, :deep_merge_options and the scope variables needed.
#
# Beside other backends (`:backends: [hierad, yaml]`), a value may
# interpolate data only they hold (`%{hiera('secret')}`), which the server
# cannot resolve: the backend then reads the hierarchy's datasources whole
# and lets Hiera interpolate and merge them as its yaml backend does.
require_relative '../../puppet_x/hierad/cache'

class Hiera::Backend::Hierad_backend
  LOOKUP_PATH = '/api/v1/lookup'.freeze
  Wire = PuppetX::Hierad::Wire

  # The part of a request body naming a hierarchy, `,"hierarchy_id":…`,
  # per client and registration body: one in a process, shared by
  # threads and by every backend instance (Hiera makes backends with
  # an unlocked `||=`).
  @registered = {}
  @registering = Mutex.new

  # `p`'s part: registered at the first call, and again when `refused`
  # (what a 409 answered) is still current.
  def self.registered(p, refused)
    @registering.synchronize do
      known = @registered[p.registration]
      return known unless known.nil? || known.equal?(refused)

      @registered[p.registration] = ",\"hierarchy_id\":#{Wire.dump(p.client.json('/api/v1/hierarchies', p.registration[1])['id'])}"
    end
  end

  # What a configuration makes of every request, worked out once per
  # configuration (Hiera's Config can be reloaded in one process).
  Prepared = Struct.new(:key, :client, :stale, :environment, :level, :static_json, :hierarchy, :registration, :alone, :pin)

  def initialize
    @scope_names = PuppetX::Hierad::Cache.new(1_000) # per environment: [when, names]
    @stale = PuppetX::Hierad::Cache.new(10_000) # the last answer of each request
    @datasources = PuppetX::Hierad::Datasources.new
  end

  def lookup(key, scope, order_override, resolution_type, context)
    Hiera.debug("Looking up #{key} in hierad backend")
    p = prepare
    env = expand(p.environment, scope, order_override)
    raise Hiera::InvalidConfigurationError, 'hierad: :environment: expands to nothing' if env.empty?

    level = p.level && expand(p.level, scope, order_override)
    return from_datasources(p, env, level, key, scope, order_override, resolution_type, context) unless p.alone

    answer = post(p, *request_body(p, env, level, key, scope, order_override, resolution_type))
    throw :no_such_key unless answer['found']
    answer['value']
  end

  private

  # Built again when the configuration changes. Threads that start
  # together may each build one: they share the client and the
  # registration.
  def prepare
    key = %i[hierad hierarchy merge_behavior deep_merge_options backends].map { |name| Hiera::Config[name] }
    p = @prepared
    return p if p && p.key.each_with_index.all? { |part, i| part.equal?(key[i]) }

    @prepared = build(key)
  end

  def build(key)
    invalid("the :hierad: section of hiera.yaml must be a Hash, not #{key[0].class}") unless key[0].nil? || key[0].is_a?(Hash)
    settings = (key[0] || {}).to_h { |k, v| [k.to_sym, v] }
    problem = PuppetX::Hierad::Client.problem(settings, 'setting')
    invalid("#{problem}, in the :hierad: section of hiera.yaml") if problem
    # A level as the server takes it: text, as Hiera makes a file name.
    hierarchy = [key[1]].flatten.map { |l| l.nil? ? invalid('a hierarchy level is nil (~), which the hierad backend cannot look up') : l.to_s }
    options = key[3].is_a?(Hash) ? symbol_entries(key[3]) : key[3] || {}
    client = PuppetX::Hierad::Client.shared(settings.reject { |k, _| %i[generation tag].include?(k) })
    alone = [key[4]].flatten.map(&:to_s) - ['hierad'] == []
    # `:generation:` or `:tag:` (Client.problem refuses both): every lookup
    # answers as of that generation (docs/api.md, "Generations and tags").
    pin = settings.slice(:generation, :tag)
    Prepared.new(key, client, settings[:failure].to_s == 'stale', settings[:environment].to_s, settings[:level]&.to_s,
                 ",\"merge_behavior\":#{Wire.dump(key[2])},\"deep_merge_options\":#{Wire.dump(options)}" +
                 pin.map { |k, v| ",\"#{k}\":#{Wire.dump(k == :tag ? v.to_s : v)}" }.join,
                 hierarchy, [client, "{\"hierarchy\":#{Wire.dump(hierarchy)}}"], alone, pin)
  end

  def invalid(message)
    raise Hiera::InvalidConfigurationError, "hierad: #{message}"
  end

  # A `%{}` template of the :hierad: section, expanded as Hiera expands
  # :datadir: (with the same guard against hiera() loops).
  def expand(text, scope, order_override)
    text.include?('%{') ? Hiera::Backend.interpolate_config(text, scope, order_override) : text
  end

  # deep_merge reads Symbol option keys only and Hiera ignores String
  # ones, so only Symbol keys are sent, as JSON names (the server reads
  # the names of these objects as Symbols).
  def symbol_entries(hash)
    hash.each_with_object({}) { |(k, v), h| h[k.to_s] = v if k.is_a?(Symbol) }
  end

  # The body before and after the hierarchy's part (see #post).
  def request_body(p, env, level, key, scope, order_override, resolution_type)
    resolution = case resolution_type
                 when :array, :hash then "\"#{resolution_type}\""
                 when Hash then Wire.dump(symbol_entries(resolution_type))
                 else '"priority"' # nil, and any other Symbol or String, to Hiera
                 end
    head = "{\"environment\":#{Wire.dump(env)}"
    head << ",\"level\":#{Wire.dump(level)}" unless level.to_s.empty?
    # The one segment of the key the backend was given, as Hiera's
    # dotted-key syntax spells it (the server splits keys again).
    head << ",\"key\":#{Wire.dump(Wire.key_path(key))},\"resolution\":#{resolution}"
    tail = p.static_json.dup
    tail << ',"order_override":' << Wire.dump(order_override) unless order_override.nil?
    tail << ',"scope":' << Wire.dump(scope_for(p, env, scope, order_override)) << '}'
    [head, tail]
  end

  # A plain Hash scope (the hiera command, tests) is sent whole. A
  # Puppet scope cannot be listed: send the variables the environment's
  # data and this hierarchy refer to.
  def scope_for(p, env, scope, order_override)
    return scope if scope.is_a?(Hash)

    names = scope_names(p.client, env) | template_names([p.hierarchy, order_override].flatten)
    names.each_with_object({}) { |name, sent| sent[name] = scope[name] if scope.include?(name) }
  end

  def scope_names(client, env)
    now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    at, names = @scope_names[env]
    return names if at && now - at < 60.0 # seconds: a new scope variable is sent within a minute

    (@scope_names[env] = [now, client.json("/api/v1/environments/#{PuppetX::Hierad::Escape.component(env)}/scope").fetch('variables')]).last
  end

  # Variables named by %{name} and %{scope('name')} in the templates.
  def template_names(templates)
    tokens = templates.grep(String).flat_map { |t| t.scan(/%\{([^}]*)\}/).flatten.map(&:strip) }
    tokens.map { |t| t =~ /\Ascope\(["'](.*)["']\)\z/ ? Regexp.last_match(1) : t }
          .reject { |t| t.empty? || t.include?('(') }.map { |t| t.split('.').first.to_s.delete(%q("')) }.uniq
  end

  # Sends the request (the hierarchy's part between `head` and `tail`);
  # returns the decoded answer {"found"=>…, "value"=>…}. After a 409
  # (the server does not hold the hierarchy's id) registers again and
  # sends it once more.
  def post(p, head, tail)
    body = hierarchy = nil
    2.times do |again|
      body = head + (hierarchy = self.class.registered(p, hierarchy)) + tail
      response = p.client.post(LOOKUP_PATH, body)
      return answer(p, body, response) unless response.status == 409 && again.zero?
    end
  rescue PuppetX::Hierad::Error => e
    # Only when no server answered (a refused registration is no
    # outage). Kept by body, which names the hierarchy by its id:
    # derived from the levels, the same on every server.
    text = p.stale && body && e.status.nil? && @stale[body] or raise
    Hiera.warn("#{e.message}; answering from the last answer received (failure: stale)")
    Wire.load(text) # decoded again: Hiera's deeper merge changes its left operand
  end

  def answer(p, body, response)
    case response.status
    when 200
      @stale[body] = response.body if p.stale
      Wire.load(response.body, response.headers['x-hierad-tagged'] != 'false')
    when 422
      raise hiera_exception(*response.error.values_at('class', 'message'))
    else raise p.client.refused("POST #{LOOKUP_PATH}", response)
    end
  end

  # The Ruby exception Hiera itself would have raised, with its class and
  # message; not klass.new(message): constructors add to the message
  # (SystemCallError's "unknown error - ") or want other arguments.
  def hiera_exception(name, message)
    klass = name.to_s.split('::').inject(Object) { |mod, n| mod.const_get(n, false) } rescue nil # rubocop:disable Style/RescueModifier
    known = klass.is_a?(Class) && klass <= Exception
    error = known ? klass.allocate.exception(message) : RuntimeError.new("#{name}: #{message}")
    # JRuby derives SystemCallError messages from errno.
    %i[message to_s].each { |reader| error.define_singleton_method(reader) { message } } if known && error.message != message
    # Text lines: Ruby's error_highlight then leaves the message alone.
    error.set_backtrace(caller(1))
    error
  end

  # One datasource, read whole; one kept as a data file that does not
  # parse fails as the yaml backend fails reading that file.
  def datasource(p, env, level, source)
    @datasources.fetch(p.client, env, level, source, p.stale, p.pin) { |warning| Hiera.warn(warning) }
  rescue PuppetX::Hierad::Error => e
    raise e.unparsed ? hiera_exception(*e.unparsed.values_at('hiera_class', 'hiera_message')) : e
  end

  # Beside other backends: the hierarchy's datasources, read whole, and
  # resolved and merged by Hiera as its yaml backend does
  # (hiera/backend/yaml_backend.rb of Hiera 3.10), so that values can
  # interpolate what only the other backends hold.
  def from_datasources(p, env, level, key, scope, order_override, resolution_type, context)
    answer = nil
    Hiera::Backend.datasources(scope, order_override) do |source|
      data = datasource(p, env, level, source)
      next unless data.include?(key)

      value = Hiera::Backend.parse_answer(data[key], scope, {}, context)
      case resolution_type.is_a?(Hash) ? :hash : resolution_type
      when :array
        raise Exception, "Hiera type mismatch for key '#{key}': expected Array and got #{value.class}" unless value.is_a?(Array) || value.is_a?(String)

        (answer ||= []) << value
      when :hash
        raise Exception, "Hiera type mismatch for key '#{key}': expected Hash and got #{value.class}" unless value.is_a?(Hash)

        answer = Hiera::Backend.merge_answer(value, answer || {}, resolution_type)
      else return value
      end
    end
    # Still nil: no datasource holds the key (a priority lookup
    # returned above, an array or hash one has made its answer).
    throw :no_such_key if answer.nil?
    answer
  end
end
