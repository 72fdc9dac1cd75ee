# The deployment task of docs/spec/configdb-api.md: "fetch all yaml files from /etc/hiera and
# upload them into corresponding data sources". Each file under the data
# folder becomes the datasource of its path without `.yaml`
# (`override/plugins.yaml` -> `override/plugins`), all of them written at
# one level of one environment in one all-or-nothing import. Used by the
# Bolt task `hierad_resources::upload` and by the type `hierad_upload` (the class
# `hierad_resources::upload`, for sites without Bolt).
require 'digest'
require 'json'
require 'yaml'
# The HTTP client is the hierad module's (hiera/ in the repository): on
# the load path where Puppet syncs plugins or Bolt's task puts it, else
# beside this module in the same modulepath.
begin
  require 'puppet_x/hierad/client'
rescue LoadError
  require_relative '../../../../hierad/lib/puppet_x/hierad/client'
end

module PuppetX
  module Hierad
    module Upload
      module_function

      API = '/api/v1/config'.freeze

      # The data files: { datasource name => path }, sorted by name. Links
      # are not followed out of the folder (a link named like data is
      # refused, as `hierad import` does).
      def files(datadir)
        raise Error, "hierad upload: #{datadir} is not a directory" unless File.directory?(datadir)

        found = Dir.glob('**/*.yaml', base: datadir).sort.map do |rel|
          path = File.join(datadir, rel)
          raise Error, "hierad upload: #{path} is a link; upload copies, not links" if File.symlink?(path)
          next unless File.file?(path)

          [rel.delete_suffix('.yaml'), path]
        end
        found.compact.to_h
      end

      # A digest of the files' names and bytes: what was uploaded.
      def digest(datadir)
        sha = Digest::SHA256.new
        files(datadir).each do |name, path|
          sha << name << "\0" << File.binread(path) << "\0"
        end
        sha.hexdigest
      end

      # The documents as the yaml backend reads them (YAML.load; an empty
      # file is an empty Hash).
      def documents(datadir)
        files(datadir).to_h do |name, path|
          data = begin
            YAML.respond_to?(:unsafe_load) ? YAML.unsafe_load(File.read(path)) : YAML.load(File.read(path))
          rescue Psych::SyntaxError => e
            raise Error, "hierad upload: #{path}: #{e.message}"
          end
          data = {} if data.nil? || data == false
          raise Error, "hierad upload: #{path}: the top level is #{data.class}, not a Hash" unless data.is_a?(Hash)

          [name, data]
        end
      end

      # Uploads `datadir` (options: url, environment, level, replace,
      # register, datadir, facts, token, user, password, ca_file, timeouts);
      # with `facts` (a Hash), stores them as the scope of the level's node.
      # Creates the environment (levels [nodes], component fuel) when it is
      # missing, as the upload task of docs/spec/configdb-api.md does. Returns the server's
      # summary: written, unchanged, deleted, defined.
      def run(options)
        options = options.to_h { |k, v| [k.to_sym, v] }
        env = Integer(options.fetch(:environment) { raise Error, 'hierad upload: environment is required' })
        datadir = options[:datadir] || '/etc/hiera'
        documents = documents(datadir)
        client = Client.new(options)
        ensure_environment(client, env)
        body = {
          'level' => options[:level].to_s,
          'replace' => options.fetch(:replace, true) ? true : false,
          'register' => options[:register] ? true : false,
          'documents' => documents
        }
        response = client.post("#{API}/environments/#{env}/import", Wire.dump(body))
        raise client.refused("uploading #{datadir} to environment #{env}", response) unless response.status == 200

        summary = JSON.parse(response.body).merge('files' => documents.size)
        return summary unless options[:facts]

        summary.merge('scope' => send_facts(client, env, options[:level].to_s, options[:facts]))
      end

      # Stores `facts` as the scope of the node the level path ends in
      # (`nodes=node-1` -> node-1), each as a top-scope variable
      # (`::fqdn`, as Hiera 3 interpolates `%{::fqdn}`), so a lookup
      # naming the node gets them. Returns the node.
      def send_facts(client, env, level, facts)
        node = level.split(',').last.to_s.split('=', 2)[1]
        raise Error, 'hierad upload: facts are stored for a node: give a level that ends in one (nodes=NAME)' if node.to_s.empty?
        raise Error, "hierad upload: facts must be a Hash, not #{facts.class}" unless facts.is_a?(Hash)

        scope = facts.to_h { |name, value| ["::#{name.to_s.delete_prefix('::')}", value] }
        path = "#{API}/environments/#{env}/nodes/#{escape(node)}/scope"
        response = client.post(path, JSON.generate(scope), 'PUT')
        raise client.refused("storing the facts of node #{node}", response) unless response.status == 204

        node
      end

      # A path segment, percent-encoded (RFC 3986's unreserved kept).
      def escape(text)
        text.b.gsub(/[^A-Za-z0-9\-._~]/) { |c| format('%%%02X', c.ord) }
      end

      def ensure_environment(client, env)
        response = client.get("#{API}/environments/#{env}")
        return if response.status == 200
        raise client.refused("reading environment #{env}", response) unless response.status == 404

        component = { 'name' => 'fuel', 'resource_definitions' => [] }
        response = client.post("#{API}/components", JSON.generate(component))
        raise client.refused('creating component fuel', response) unless [201, 409].include?(response.status)

        environment = { 'id' => env, 'components' => ['fuel'], 'hierarchy_levels' => ['nodes'] }
        response = client.post("#{API}/environments", JSON.generate(environment))
        raise client.refused("creating environment #{env}", response) unless [201, 409].include?(response.status)
      end
    end
  end
end
