# The Hiera 3 backend `hierad`: each lookup is one HTTP request to a hierad
# server, which resolves, merges and interpolates exactly as Hiera 3.10
# does over YAML files holding the same data.
#
# hiera.yaml:
#
#   :backends:
#     - hierad
#   :hierad:
#     :url: http://hierad.example:8750        # or a list, tried in order
#     :environment: 1                         # an id, or a %{} template
#     :level: "nodes=%{::fqdn}"               # a %{} template; none = root
#     :connect_timeout: 2                     # seconds
#     :read_timeout: 10
#     :token: secret                          # or :user: and :password:
#     :token_file: /etc/hierad/puppet.token   # or :password_file:, :keystone_token_file:
#                                             # (first line; read again after a 401)
#     :ca_file: /etc/hierad/ca.pem            # for https:// URLs
#     :cert_file: <hostcert>                  # and :key_file: <hostprivkey>: a
#                                             # client certificate (mTLS)
#     :keystone_token: <token>                # sent as X-Auth-Token
#     :failure: error                         # or stale
#
# What is sent: the key, the resolution type, the hierarchy as written in
# hiera.yaml (the server interpolates it lazily, level by level, as the
# yaml backend does, so `%{hiera('x')}` in a level behaves the same), the
# order override, :merge_behavior and :deep_merge_options, and the scope
# variables interpolation needs. The hierarchy is the same for every
# lookup of one configuration: it is registered once (POST
# /api/v1/hierarchies, at the first lookup) and each lookup names it by
# the id the server answered (`hierarchy_id`, derived from the levels, the
# same on every server). A server that does not hold the id (restarted,
# another replica, the list dropped) answers 409: the backend registers
# again and sends that lookup once more. A server older than the
# registration route (404, 405) gets the hierarchy inline in every lookup.
require_relative '../../puppet_x/hierad/client'
require_relative '../../puppet_x/hierad/cache'

class Hiera
  module Backend
    class Hierad_backend
      LOOKUP_PATH = '/api/v1/lookup'.freeze
      SCOPE_TTL = 60.0
      SETTINGS = (PuppetX::Hierad::Client::OPTIONS + %i[environment level failure]).freeze
      Wire = PuppetX::Hierad::Wire
      # X-Hierad-Tagged: whether the answer holds tagged values, so that a
      # large one need not be searched for them (servers before it: nil,
      # searched).
      TAGGED = { 'true' => true, 'false' => false }.freeze

      # A `%{}` template of the :hierad: section. Expanded as Hiera expands
      # :datadir: (Backend.interpolate_config: the same guard against
      # hiera() loops), with a shortcut for the common case: plain
      # variables whose values hold no `%{`, where the result is the same.
      class Template
        TOKEN = /%\{([^}]*)\}/.freeze
        # A variable Hiera reads as one scope key: no dots, quotes, spaces
        # or calls, not all digits.
        PLAIN = /\A(?:::)?[A-Za-z_][\w]*(?:::\w+)*\z/.freeze

        def initialize(text)
          @text = text
          @constant = !text.include?('%{')
          @parts = text.split(TOKEN, -1) # literal, name, literal, …
          @plain = @parts.each_with_index.all? { |p, i| i.even? || PLAIN.match?(p) }
        end

        def expand(scope, order_override)
          return @text if @constant
          return Backend.interpolate_config(@text, scope, order_override) unless @plain

          out = +''
          @parts.each_with_index do |part, i|
            if i.even?
              out << part
              next
            end
            value = scope.include?(part) ? scope[part] : nil
            case value
            when nil then nil
            when String
              return Backend.interpolate_config(@text, scope, order_override) if value.include?('%{')

              out << value
            when Integer, TrueClass, FalseClass, Symbol then out << value.to_s
            else return Backend.interpolate_config(@text, scope, order_override)
            end
          end
          out
        end
      end

      # A configuration's hierarchy as its server knows it: registered once
      # and named by id, or sent inline to a server older than the
      # registration route. One per client and hierarchy in a process,
      # shared by its threads and by every backend instance: Hiera makes
      # its backends with an unlocked `@backends[name] ||= …`, so threads
      # starting together on a fresh Hiera can get two instances.
      class Registration
        PATH = '/api/v1/hierarchies'.freeze
        ID = /\A[0-9a-f]{32}\z/.freeze

        @shared = {}
        @mutex = Mutex.new

        def self.shared(client, hierarchy)
          @mutex.synchronize { @shared[[client, hierarchy]] ||= new(hierarchy) }
        end

        def initialize(hierarchy)
          levels = Wire.dump(hierarchy)
          @body = "{\"hierarchy\":#{levels}}"
          @inline = ",\"hierarchy\":#{levels}"
          @mutex = Mutex.new
          @json = nil
        end

        # The request body's part naming the hierarchy: `,"hierarchy_id":…`
        # (registered at the first call), or `,"hierarchy":[…]` inline.
        def json(client)
          @json || @mutex.synchronize { @json ||= register(client) }
        end

        # After a 409 to a request sent with `sent` (what #json gave):
        # registers again, unless another thread already did.
        def renew(client, sent)
          @mutex.synchronize do
            @json = register(client) if @json.equal?(sent)
            @json
          end
        end

        private

        def register(client)
          response = client.post(PATH, @body)
          case response.status
          when 200
            id = id_of(response.body)
            raise client.refused("POST #{PATH} answered no id", response) unless id.is_a?(String) && ID.match?(id)

            ",\"hierarchy_id\":\"#{id}\""
          when 404, 405
            Hiera.debug("hierad: #{client.urls.join(', ')} has no #{PATH} (an older server): the hierarchy goes with every lookup")
            @inline
          else
            raise client.refused("POST #{PATH}", response)
          end
        end

        def id_of(text)
          answer = JSON.parse(text)
          answer['id'] if answer.is_a?(Hash)
        rescue JSON::ParserError
          nil
        end
      end

      # What a configuration makes of every request, worked out once per
      # configuration (Hiera's Config can be reloaded in one process).
      Prepared = Struct.new(:key, :client, :failure, :environment, :level, :static_json, :hierarchy, :registration)

      def initialize
        Hiera.debug('Hiera hierad backend starting')
        @mutex = Mutex.new
        @prepared = nil
        @scope_names = {}
        # `failure: stale` answers from the last answer this process got for
        # the very same request when no server answers; without one it
        # fails like `error`.
        @stale = PuppetX::Hierad::Cache.new(10_000)
      end

      def lookup(key, scope, order_override, resolution_type, context)
        Hiera.debug("Looking up #{key} in hierad backend")
        prepared = prepare
        env = prepared.environment.expand(scope, order_override)
        raise Hiera::InvalidConfigurationError, 'hierad: :environment: expands to nothing' if env.empty?

        level = prepared.level&.expand(scope, order_override)
        head, tail = request_body(prepared, env, level, key, scope, order_override, resolution_type)
        answer = post(prepared, head, tail)
        throw :no_such_key unless answer['found']

        Hiera.debug("Found #{key} in hierad")
        answer['value']
      end

      private

      # Built again when the configuration changes. Threads that start
      # together may each build one: they share the client and the
      # registration (Client.shared, Registration.shared).
      def prepare
        key = [Config[:hierad], Config[:hierarchy], Config[:merge_behavior], Config[:deep_merge_options]]
        p = @prepared
        return p if current?(p, key)

        @prepared = build(key)
      end

      def current?(prepared, key)
        prepared && prepared.key.each_with_index.all? { |part, i| part.equal?(key[i]) }
      end

      def build(key)
        raw = key[0] || {}
        raise Hiera::InvalidConfigurationError, "hierad: the :hierad: section of hiera.yaml must be a Hash, not #{raw.class}" unless raw.is_a?(Hash)

        settings = raw.to_h { |k, v| [k.to_sym, v] }
        unknown = settings.keys - SETTINGS
        raise Hiera::InvalidConfigurationError, "hierad: unknown setting(s) #{unknown.join(', ')} in the :hierad: section (known: #{SETTINGS.join(', ')})" unless unknown.empty?

        failure = (settings[:failure] || 'error').to_s
        modes = PuppetX::Hierad::Cache::FAILURE_MODES
        raise Hiera::InvalidConfigurationError, "hierad: :failure: must be one of #{modes.join(', ')}, not #{failure.inspect}" unless modes.include?(failure)

        environment = template(settings, :environment)
        raise Hiera::InvalidConfigurationError, 'hierad: :environment: is not set in the :hierad: section of hiera.yaml' unless environment

        hierarchy = [key[1]].flatten.map { |level| hierarchy_level(level) }
        options = key[3] || {}
        options = symbol_entries(options) if options.is_a?(Hash)
        static = ',"merge_behavior":' + Wire.dump(key[2]) +
                 ',"deep_merge_options":' + Wire.dump(options)
        client = PuppetX::Hierad::Client.shared(settings)
        Prepared.new(key, client, failure, environment, template(settings, :level), static, hierarchy,
                     Registration.shared(client, hierarchy))
      end

      def template(settings, name)
        value = settings[name]
        return nil if value.nil?
        unless value.is_a?(String) || (name == :environment && value.is_a?(Integer))
          raise Hiera::InvalidConfigurationError, "hierad: :#{name}: must be a String (a %{} template), not #{value.class}"
        end

        Template.new(value.to_s)
      end

      # A level as the server takes it: text. Hiera turns a non-String level
      # into a file name with to_s; nil cannot be sent (it names `.yaml`).
      def hierarchy_level(level)
        raise Hiera::InvalidConfigurationError, 'hierad: a hierarchy level is nil (~), which the hierad backend cannot look up' if level.nil?

        level.to_s
      end

      # deep_merge reads Symbol option keys only and Hiera ignores String
      # ones, so only Symbol keys are sent, as JSON names (the server reads
      # the names of these objects as Symbols).
      def symbol_entries(hash)
        hash.each_with_object({}) { |(k, v), h| h[k.to_s] = v if k.is_a?(Symbol) }
      end

      def resolution_json(resolution_type)
        case resolution_type
        when :array, :hash then "\"#{resolution_type}\""
        when Hash then Wire.dump(symbol_entries(resolution_type))
        else '"priority"' # nil, and any other Symbol or String, to Hiera
        end
      end

      def request_body(prepared, env, level, key, scope, order_override, resolution_type)
        body = +'{"environment":'
        body << Wire.dump(env)
        body << ',"level":' << Wire.dump(level) if level && !level.empty?
        # The one segment of the key the backend was given, as Hiera's
        # dotted-key syntax spells it (the server splits keys again).
        body << ',"key":' << Wire.dump(Wire.key_path(key))
        body << ',"resolution":' << resolution_json(resolution_type)
        # The hierarchy's part goes between these two (see #post).
        tail = prepared.static_json.dup
        tail << ',"order_override":' << Wire.dump(order_override) unless order_override.nil?
        tail << ',"scope":' << Wire.dump(scope_for(prepared, env, scope, order_override))
        tail << '}'
        [body, tail]
      end

      # A plain Hash scope (the hiera command, tests) is sent whole. A
      # Puppet scope cannot be listed: send the variables the environment's
      # data and this hierarchy refer to.
      def scope_for(prepared, env, scope, order_override)
        return scope if scope.is_a?(Hash)

        names = scope_names(prepared, env) | template_names([prepared.hierarchy, order_override].flatten)
        names.each_with_object({}) do |name, sent|
          sent[name] = scope[name] if scope.include?(name)
        end
      end

      def scope_names(prepared, env)
        cached = @mutex.synchronize { @scope_names[env] }
        return cached[1] if cached && now - cached[0] < SCOPE_TTL

        client = prepared.client
        path = "/api/v1/environments/#{PuppetX::Hierad::Escape.component(env)}/scope"
        response = client.get(path)
        raise client.refused("GET #{path}", response) unless response.status == 200

        names = JSON.parse(response.body).fetch('variables')
        @mutex.synchronize { @scope_names[env] = [now, names] }
        names
      end

      # Variables named by %{name} and %{scope('name')} in the templates.
      def template_names(templates)
        templates.grep(String).flat_map do |t|
          t.scan(Template::TOKEN).map do |(token)|
            token = token.strip
            token = Regexp.last_match(1) if token =~ /\Ascope\(["'](.*)["']\)\z/
            next nil if token.empty? || token.include?('(')

            token.split('.').first.to_s.delete(%q("'))
          end
        end.compact.uniq
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      # Sends the request (the hierarchy's part between `head` and `tail`);
      # returns the decoded answer {"found"=>…, "value"=>…}. A 409 (the
      # server does not hold the hierarchy's id) registers it again and
      # sends the request once more.
      def post(prepared, head, tail)
        client = prepared.client
        registration = prepared.registration
        body = nil
        begin
          hierarchy = registration.json(client)
          body = head + hierarchy + tail
          response = client.post(LOOKUP_PATH, body)
          if response.status == 409
            hierarchy = registration.renew(client, hierarchy)
            body = head + hierarchy + tail
            response = client.post(LOOKUP_PATH, body)
          end
        rescue PuppetX::Hierad::Error => e
          # Only when no server answered (a refused registration is no
          # outage). The answers are kept by body, which names the
          # hierarchy by id: derived from the levels, the same on every server.
          text = prepared.failure == 'stale' && body && e.status.nil? && @stale[body]
          raise unless text

          Hiera.warn("#{e.message}; answering from the last answer received (failure: stale)")
          # Decoded again: Hiera's deeper merge changes its left operand, so
          # no two lookups may be given the same objects.
          return Wire.load(text)
        end
        case response.status
        when 200
          @stale[body] = response.body if prepared.failure == 'stale'
          Wire.load(response.body, TAGGED[response.headers['x-hierad-tagged']])
        when 422
          error = JSON.parse(response.body)
          raise hiera_exception(error['class'], error['message'])
        else
          raise client.refused("POST #{LOOKUP_PATH}", response)
        end
      end

      # The Ruby exception Hiera itself would have raised: the server names
      # its class and gives its message.
      def hiera_exception(klass_name, message)
        klass = begin
          klass_name.to_s.split('::').inject(Object) { |mod, name| mod.const_get(name, false) }
        rescue NameError
          nil
        end
        error = klass.is_a?(Class) && klass <= Exception ? exception_of(klass, message) : RuntimeError.new("#{klass_name}: #{message}")
        # A backtrace of text lines: Ruby's error_highlight then leaves the
        # message alone (it would point at the shim's `raise`).
        error.set_backtrace(caller(1))
        error
      end

      # Not klass.new(message): constructors add to the message
      # (SystemCallError's "unknown error - ", Psych 3's DisallowedClass) or
      # want other arguments (Psych::SyntaxError); the server's message is
      # already the one Hiera printed.
      def exception_of(klass, message)
        error = klass.allocate.exception(message)
        return error if error.message == message

        # JRuby derives SystemCallError messages from errno whatever is set.
        error.define_singleton_method(:message) { message }
        error.define_singleton_method(:to_s) { message }
        error
      end
    end
  end
end
